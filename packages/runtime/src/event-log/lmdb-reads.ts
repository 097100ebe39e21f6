/** Read walks over the databases of `LmdbEventLog` that span many streams. */
import type { Database } from 'lmdb';
import type { GlobalRecord, StoredRecord } from '@baton/log-schema';
import { toStoredRecord } from './codec.ts';

export type RecordKey = [string, number];

/** Above every seq (seqs are safe integers): `[stream, PAST_LAST_SEQ]` sorts after all of the stream's keys. */
export const PAST_LAST_SEQ = Number.MAX_SAFE_INTEGER + 1;

/** Names of the streams starting with `prefix`, in key order. */
export function* streamsOf(records: Database<unknown, RecordKey>, prefix: string): Iterable<string> {
  // one cursor step per stream: from the first key at or after [prefix], then past the last seq of each stream
  let start: RecordKey | [string] | undefined = prefix === '' ? undefined : [prefix];
  for (;;) {
    let next: string | undefined;
    for (const key of records.getKeys(start === undefined ? { limit: 1 } : { start, limit: 1 })) next = key[0];
    if (next === undefined || !next.startsWith(prefix)) return;
    yield next;
    start = [next, PAST_LAST_SEQ];
  }
}

/** Records of all streams in commit order from global sequence `from`, at most `limit` of them. */
export function* globalRecords(
  global: Database<RecordKey, number>,
  records: Database<unknown, RecordKey>,
  from: number,
  limit: number | undefined,
): Iterable<GlobalRecord> {
  const range = global.getRange({ start: from, ...(limit === undefined ? {} : { limit }) });
  for (const { key, value } of range) {
    const [stream, seq] = value;
    const decoded = records.get([stream, seq]);
    if (decoded === undefined) continue;
    const record = toStoredRecord(decoded, stream, seq) as StoredRecord & { globalSeq: number };
    record.globalSeq = key;
    yield record;
  }
}
