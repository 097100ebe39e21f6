import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BLOB_RECORDS,
  BLOBS_STREAM,
  COMMIT_RECORDS,
  HANDOFF_RECORDS,
  LogRecordError,
  RECORD_PACKR_OPTIONS,
  SESSION_RECORDS,
  WRITER_RECORDS,
  checkAnyRecord,
  checkRecord,
  messageKey,
  parseStream,
  sessionOfWriter,
  type StoredRecord,
} from '../src/index.ts';

/**
 * The records Baton keeps on disk, pinned. `golden/records.ndjson` holds one stored record of every type of every
 * stream (recorded by test/fixtures/logs/record-golden.ts from a real run, plus the types that run does not reach);
 * `golden/shapes.json` holds the JSON Schema of every record type's payload. A change to an actor event, a protocol
 * message or a record schema that changes what is stored fails here: either old records no longer read (the samples),
 * or the stored shape moved (the shapes). After a deliberate, compatible change, re-record the samples and rewrite the
 * shapes with `BATON_UPDATE_GOLDEN=1 npx vitest run packages/log-schema/test/records.test.ts`.
 */
const GOLDEN = new URL('./golden/', import.meta.url);
const SHAPES_FILE = fileURLToPath(new URL('shapes.json', GOLDEN));

interface GoldenLine {
  readonly stream: string;
  readonly seq: number;
  readonly type: string;
  readonly at: number;
  readonly payload: unknown;
  readonly msgId?: string;
}

/** `{ "$bytes": <base64> }` back to bytes (JSON has none; the blob stream stores them). */
function reviver(_key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 1 && typeof (value as { $bytes?: unknown }).$bytes === 'string') {
    return new Uint8Array(Buffer.from((value as { $bytes: string }).$bytes, 'base64'));
  }
  return value;
}

const golden: StoredRecord[] = readFileSync(new URL('records.ndjson', GOLDEN), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l, reviver) as GoldenLine)
  .map((l) => ({ v: 1, stream: l.stream, seq: l.seq, type: l.type, at: l.at, payload: l.payload, ...(l.msgId !== undefined ? { msgId: l.msgId } : {}) }));

/** The value with every byte string (Uint8Array or Buffer) as a plain array of its bytes. */
function bytesAsArrays(value: unknown): unknown {
  if (value instanceof Uint8Array) return [...value];
  if (Array.isArray(value)) return value.map(bytesAsArrays);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bytesAsArrays(v)]));
  return value;
}

/** Checks any record Baton stores, the blob stream's included. */
function check(record: StoredRecord): unknown {
  return record.stream === BLOBS_STREAM ? checkRecord(BLOB_RECORDS, record) : checkAnyRecord(record);
}

/** Every record type per stream family, as `<family>:<type>`. */
function allTypes(): string[] {
  const families: [string, object][] = [
    ['session', SESSION_RECORDS],
    ['writer', WRITER_RECORDS],
    ['commits', COMMIT_RECORDS],
    ['blobs', BLOB_RECORDS],
    ['handoffs', HANDOFF_RECORDS],
  ];
  return families.flatMap(([family, schemas]) => Object.keys(schemas).map((t) => `${family}:${t}`)).sort();
}

function familyOf(stream: string): string {
  if (stream === BLOBS_STREAM) return 'blobs';
  const kind = parseStream(stream)?.kind;
  if (kind === undefined) throw new Error(`golden record in a stream Baton does not write: ${stream}`);
  return kind;
}

function shapes(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const families: [string, Readonly<Record<string, z.ZodType>>][] = [
    ['session', SESSION_RECORDS],
    ['writer', WRITER_RECORDS],
    ['commits', COMMIT_RECORDS],
    ['blobs', BLOB_RECORDS],
    ['handoffs', HANDOFF_RECORDS],
  ];
  for (const [family, schemas] of families) {
    for (const [type, schema] of Object.entries(schemas)) {
      // What a writer must supply (fields with defaults may be absent in stored records).
      out[`${family}:${type}`] = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });
    }
  }
  return out;
}

describe('golden records', () => {
  it('hold one stored record of every type of every stream', () => {
    const seen = [...new Set(golden.map((r) => `${familyOf(r.stream)}:${r.type}`))].sort();
    expect(seen).toEqual(allTypes());
  });

  it.each(golden.map((r) => [`${familyOf(r.stream)}:${r.type}`, r] as const))('%s is read by today’s schema', (_name, record) => {
    expect(() => check(record)).not.toThrow();
  });

  it.each(golden.map((r) => [`${familyOf(r.stream)}:${r.type}`, r] as const))('%s round-trips through the on-disk encoding unchanged', (_name, record) => {
    const packr = new Packr({ ...RECORD_PACKR_OPTIONS });
    const bytes = packr.pack(record);
    const back = packr.unpack(bytes) as StoredRecord;
    // Decoded byte strings come back as Buffers: the same bytes re-encode identically, and read as the same record.
    expect(Buffer.compare(packr.pack(back), bytes)).toBe(0);
    expect(bytesAsArrays(back)).toEqual(bytesAsArrays(record));
    expect(() => check(back)).not.toThrow();
  });

  it('every record type stores the shape pinned in golden/shapes.json', () => {
    const now = shapes();
    if (process.env.BATON_UPDATE_GOLDEN === '1') writeFileSync(SHAPES_FILE, `${JSON.stringify(now, null, 2)}\n`);
    const pinned = JSON.parse(readFileSync(SHAPES_FILE, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(pinned).sort()).toEqual(allTypes());
    for (const key of allTypes()) expect(now[key], `the stored shape of ${key} changed`).toEqual(pinned[key]);
  });
});

describe('record checks', () => {
  const opened = golden.find((r) => r.type === 'session.opened');
  if (opened === undefined) throw new Error('no golden session.opened');

  it('refuse a record type the stream does not have, naming it', () => {
    const record = { ...opened, type: 'session.teleported' };
    expect(() => checkAnyRecord(record)).toThrow(LogRecordError);
    expect(() => checkAnyRecord(record)).toThrow(/unknown record type session\.teleported/);
    // A record type of another stream is unknown here too.
    expect(() => checkAnyRecord({ ...opened, type: 'writer.started' })).toThrow(/unknown record type writer\.started/);
  });

  it('refuse a record in a stream Baton does not write', () => {
    expect(() => checkAnyRecord({ ...opened, stream: 'elsewhere/x' })).toThrow(LogRecordError);
  });

  it('refuse a payload that lost a required field, naming its path', () => {
    const { setup: _setup, ...rest } = opened.payload as Record<string, unknown>;
    expect(() => checkAnyRecord({ ...opened, payload: rest })).toThrow(/setup/);
  });

  it('refuse blob bytes that are not bytes', () => {
    const blob = golden.find((r) => r.stream === BLOBS_STREAM);
    if (blob === undefined) throw new Error('no golden blob');
    expect(() => checkRecord(BLOB_RECORDS, { ...blob, payload: { hash: 'h', data: 'not bytes' } })).toThrow(LogRecordError);
  });
});

describe('keys and names on disk', () => {
  it('a message id registers m:<id>, or a hash when long or holding control characters', () => {
    expect(messageKey('msg-1')).toBe('m:msg-1');
    expect(messageKey('x'.repeat(200))).toBe(`m:${'x'.repeat(200)}`);
    expect(messageKey('x'.repeat(201))).toMatch(/^m#[0-9a-f]{64}$/);
    expect(messageKey('a\nb')).toMatch(/^m#[0-9a-f]{64}$/);
    expect(messageKey('a\nb')).not.toBe(messageKey('a\rb'));
  });

  it('a writer id names its session', () => {
    expect(sessionOfWriter('s-1-w3')).toBe('s-1');
    expect(sessionOfWriter('s-w1-w12')).toBe('s-w1');
    expect(sessionOfWriter('s-w0')).toBeNull();
    expect(sessionOfWriter('plain')).toBeNull();
  });

  it('stream names say their family; the blob stream is not one of the event log', () => {
    expect(parseStream('session/a')).toEqual({ kind: 'session', sessionId: 'a' });
    expect(parseStream('writer/a-w1')).toEqual({ kind: 'writer', writerId: 'a-w1' });
    expect(parseStream('memory/commits')).toEqual({ kind: 'commits' });
    expect(parseStream(BLOBS_STREAM)).toBeNull();
  });
});
