import { Packr } from 'msgpackr';
import { z } from 'zod';
import type { AppendInput } from '@baton/log-schema';
import { ClusterError } from './cluster-error.ts';

/**
 * One entry of a session's replicated log, stored as the only message on subject `<prefix>.log.<sid>.<index>`:
 * - `marker`: the first entry a daemon writes after it claimed epoch `e` of the session; no entry of an older epoch
 *   may follow it;
 * - `batch`: records appended to the local event log, by stream, each stream with `b` = the stream's last seq before
 *   them (so a copy that already holds them can tell, and one that lacks earlier records notices the gap);
 * - `part`: one piece of a batch too large for one message; the `n` pieces sit at consecutive indexes.
 * `e` is the writer's epoch and `d` its daemon id in every entry.
 */
export type LogEntry = MarkerEntry | BatchEntry | PartEntry;

export interface MarkerEntry {
  readonly k: 'marker';
  readonly e: number;
  readonly d: string;
}

export interface StreamRecords {
  /** Local event-log stream name (`session/<sid>`, `writer/<wid>`, `memory/commits`). */
  readonly s: string;
  /** The stream's last seq before these records, on the writer's copy. */
  readonly b: number;
  readonly r: readonly AppendInput[];
}

export interface BatchEntry {
  readonly k: 'batch';
  readonly e: number;
  readonly d: string;
  readonly a: readonly StreamRecords[];
}

export interface PartEntry {
  readonly k: 'part';
  readonly e: number;
  readonly d: string;
  /** 0-based piece number and the number of pieces. */
  readonly p: number;
  readonly n: number;
  readonly x: Uint8Array;
}

const Epoch = z.int().positive();
const Daemon = z.string().min(1).max(64);

const AppendInputSchema = z.strictObject({
  type: z.string().min(1),
  at: z.number(),
  payload: z.unknown(),
  msgId: z.string().min(1).optional(),
  keys: z.array(z.string().min(1)).optional(),
});

const StreamRecordsSchema = z.strictObject({ s: z.string().min(1), b: z.int().nonnegative(), r: z.array(AppendInputSchema).min(1) });

const LogEntrySchema = z.discriminatedUnion('k', [
  z.strictObject({ k: z.literal('marker'), e: Epoch, d: Daemon }),
  z.strictObject({ k: z.literal('batch'), e: Epoch, d: Daemon, a: z.array(StreamRecordsSchema).min(1) }),
  z.strictObject({ k: z.literal('part'), e: Epoch, d: Daemon, p: z.int().nonnegative(), n: z.int().min(2), x: z.instanceof(Uint8Array) }).refine((v) => v.p < v.n, { message: 'piece number out of range', path: ['p'] }),
]);

/** Plain MessagePack maps (any MessagePack reader decodes them), binary kept as bytes. */
const packr = new Packr({ useRecords: false, copyBuffers: true });

/** The entry's bytes as stored in JetStream. */
export function encodeEntry(entry: LogEntry): Uint8Array {
  return packr.pack(entry);
}

function toAppendInput(r: z.output<typeof AppendInputSchema>): AppendInput {
  return {
    type: r.type,
    at: r.at,
    payload: r.payload,
    ...(r.msgId !== undefined ? { msgId: r.msgId } : {}),
    ...(r.keys !== undefined ? { keys: r.keys } : {}),
  };
}

/** Decodes and checks an entry; throws `ClusterError('bad_entry')` naming `where` and the failing path. */
export function decodeEntry(bytes: Uint8Array, where: string): LogEntry {
  let value: unknown;
  try {
    value = packr.unpack(bytes);
  } catch (err) {
    throw new ClusterError('bad_entry', `${where}: not MessagePack`, { where }, { cause: err });
  }
  const parsed = LogEntrySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue === undefined ? '' : issue.path.join('.');
    throw new ClusterError('bad_entry', `${where}: ${path || '(entry)'}: ${issue?.message ?? 'invalid'}`, { where, path });
  }
  const e = parsed.data;
  switch (e.k) {
    case 'marker':
      return e;
    case 'part':
      return e;
    case 'batch':
      return { k: 'batch', e: e.e, d: e.d, a: e.a.map((s) => ({ s: s.s, b: s.b, r: s.r.map(toAppendInput) })) };
  }
}

/**
 * The entries one batch is written as: the batch itself when it fits `maxBytes`, else its encoding cut into `part`
 * entries of at most `maxBytes` of payload each (the caller leaves room for the message's headers).
 */
export function entriesOf(batch: BatchEntry, maxBytes: number): LogEntry[] {
  const bytes = encodeEntry(batch);
  if (bytes.byteLength <= maxBytes) return [batch];
  // A piece's own envelope is small and fixed; keep the piece payload clear of it.
  const room = Math.max(1, maxBytes - 256);
  const n = Math.ceil(bytes.byteLength / room);
  const parts: LogEntry[] = [];
  for (let p = 0; p < n; p++) parts.push({ k: 'part', e: batch.e, d: batch.d, p, n, x: bytes.subarray(p * room, Math.min(bytes.byteLength, (p + 1) * room)) });
  return parts;
}

/** Joins the pieces of one batch (in order) and decodes it; throws `ClusterError('bad_entry')` when they do not make one. */
export function joinParts(parts: readonly PartEntry[], where: string): BatchEntry {
  const total = parts.reduce((n, p) => n + p.x.byteLength, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    bytes.set(p.x, at);
    at += p.x.byteLength;
  }
  const entry = decodeEntry(bytes, where);
  if (entry.k !== 'batch') throw new ClusterError('bad_entry', `${where}: the joined pieces are a ${entry.k}, not a batch`, { where });
  return entry;
}
