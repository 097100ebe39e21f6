/** The named databases of `LmdbEventLog`'s environment, how they are opened, and removing a stream from all of them. */
import type { Database, RootDatabase } from 'lmdb';
import { Packr } from 'msgpackr';
import { RECORD_PACKR_OPTIONS } from '@baton/log-schema';
import { PAST_LAST_SEQ, type RecordKey } from './lmdb-reads.ts';

export type MsgIdKey = [string, string];

export interface LogDatabases {
  /** `[stream, seq]` → msgpack record. */
  readonly records: Database<unknown, RecordKey>;
  /** `[stream, msgId]` → seq (idempotency). */
  readonly msgIds: Database<number, MsgIdKey>;
  /** `[stream, key]` → seq (lookup keys a record registered). */
  readonly keys: Database<number, MsgIdKey>;
  /** Global seq → `[stream, seq]` (tailing across streams). */
  readonly global: Database<RecordKey, number>;
}

/** Opens the named databases of `env` (at construction and after each reopen). */
export function openDatabases(env: RootDatabase): LogDatabases {
  // decode with the same msgpackr (version and options) that encodes in codec.ts; lmdb-js constructs the
  // `Encoder` class with the msgpackr options found in the database options
  const recordsOptions = { encoding: 'msgpack' as const, encoder: { Encoder: Packr }, ...RECORD_PACKR_OPTIONS };
  return {
    records: env.openDB<unknown, RecordKey>('records', recordsOptions),
    msgIds: env.openDB<number, MsgIdKey>('msgids', { encoding: 'msgpack' }),
    keys: env.openDB<number, MsgIdKey>('keys', { encoding: 'msgpack' }),
    global: env.openDB<RecordKey, number>('global', { encoding: 'msgpack' }),
  };
}

/**
 * Removes every record of `stream`, its message ids, its lookup keys and its entries in the global order in one
 * synchronous write transaction; returns how many records it removed. Walks the whole global order.
 */
export function removeStreamEntries(env: RootDatabase, dbs: LogDatabases, stream: string): number {
  // Keys first (read transaction), then one write transaction removes them all.
  const records = [...dbs.records.getKeys({ start: [stream, 0], end: [stream, PAST_LAST_SEQ] })];
  const named = (db: Database<number, MsgIdKey>): MsgIdKey[] => {
    const out: MsgIdKey[] = [];
    for (const key of db.getKeys({ start: [stream] })) {
      if (key[0] !== stream) break;
      out.push(key);
    }
    return out;
  };
  const msgIds = named(dbs.msgIds);
  const keys = named(dbs.keys);
  const globals: number[] = [];
  for (const { key, value } of dbs.global.getRange()) if (value[0] === stream) globals.push(key);
  env.transactionSync(() => {
    for (const key of records) dbs.records.removeSync(key);
    for (const key of msgIds) dbs.msgIds.removeSync(key);
    for (const key of keys) dbs.keys.removeSync(key);
    for (const key of globals) dbs.global.removeSync(key);
  });
  return records.length;
}
