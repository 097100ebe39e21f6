/**
 * Shared record codec and input validation for the event-log adapters. Both adapters encode records with the same
 * msgpackr `Packr` (plain MessagePack maps, no record extension) so values round-trip identically through
 * `LmdbEventLog` and `MemoryEventLog`.
 */
import { Packr } from 'msgpackr';
import { RECORD_PACKR_OPTIONS, type AppendInput, type LogRecord, type StoredRecord } from '@baton/log-schema';
import { releaseLargePackBuffer } from '@baton/protocol';

export function createRecordPackr(): Packr {
  return new Packr({ ...RECORD_PACKR_OPTIONS });
}

/** UTF-8 byte limits keeping `[stream, seq]` and `[stream, msgId]` well under LMDB's 1978-byte key limit. */
export const MAX_STREAM_BYTES = 512;
export const MAX_MSG_ID_BYTES = 1024;

export function validateStream(stream: string): void {
  if (typeof stream !== 'string' || stream.length === 0) {
    throw new TypeError('event log: stream must be a non-empty string');
  }
  // a UTF-16 code unit is at most 3 UTF-8 bytes, so short strings skip the byte count
  if (stream.length * 3 > MAX_STREAM_BYTES && Buffer.byteLength(stream, 'utf8') > MAX_STREAM_BYTES) {
    throw new RangeError(`event log: stream name longer than ${MAX_STREAM_BYTES} UTF-8 bytes`);
  }
}

function validateInput(input: AppendInput): void {
  if (input === null || typeof input !== 'object') throw new TypeError('event log: record must be an object');
  if (typeof input.type !== 'string') throw new TypeError('event log: record type must be a string');
  if (typeof input.at !== 'number' || !Number.isFinite(input.at)) {
    throw new TypeError('event log: record `at` must be a finite number');
  }
  if (input.msgId !== undefined) validateKey(input.msgId, 'msgId');
  if (input.keys !== undefined) {
    if (!Array.isArray(input.keys)) throw new TypeError('event log: keys must be an array of strings when present');
    for (const key of input.keys) validateKey(key, 'key');
  }
}

/** Checks a msgId or lookup key: a non-empty string that fits an LMDB key next to its stream name. */
export function validateKey(key: unknown, what: 'msgId' | 'key'): void {
  if (typeof key !== 'string' || key.length === 0) throw new TypeError(`event log: ${what} must be a non-empty string`);
  if (key.length * 3 > MAX_MSG_ID_BYTES && Buffer.byteLength(key, 'utf8') > MAX_MSG_ID_BYTES) {
    throw new RangeError(`event log: ${what} longer than ${MAX_MSG_ID_BYTES} UTF-8 bytes`);
  }
}

/** The stored form of an input (`msgId` omitted when absent). */
export function toLogRecord(input: AppendInput): LogRecord {
  return input.msgId === undefined
    ? { v: 1, type: input.type, at: input.at, payload: input.payload }
    : { v: 1, type: input.type, at: input.at, payload: input.payload, msgId: input.msgId };
}

/**
 * Validates and encodes the records of one append call. Throws (before anything is queued) when a record is
 * malformed or its payload cannot be encoded, so one bad append never poisons a group-commit batch.
 */
export function encodeInputs(packr: Packr, stream: string, inputs: readonly AppendInput[]): Uint8Array[] {
  validateStream(stream);
  if (!Array.isArray(inputs)) throw new TypeError('event log: records must be an array');
  const encoded = new Array<Uint8Array>(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i] as AppendInput;
    validateInput(input);
    const packed = packr.pack(toLogRecord(input));
    releaseLargePackBuffer(packr, packed.length);
    encoded[i] = packed;
  }
  return encoded;
}

/**
 * Turns a decoded stored value into a `StoredRecord`. The decoded object is fresh (never shared), so it is completed
 * in place rather than copied.
 */
export function toStoredRecord(decoded: unknown, stream: string, seq: number): StoredRecord {
  const record = decoded as { stream: string; seq: number };
  record.stream = stream;
  record.seq = seq;
  return record as unknown as StoredRecord;
}

/** Compares strings by Unicode code point, i.e. the UTF-8 byte order LMDB uses for string keys. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // a surrogate (a code point above U+FFFF) sorts after every BMP code unit in UTF-8 order
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
