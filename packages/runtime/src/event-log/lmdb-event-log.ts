/**
 * Durable `EventLog` adapter on LMDB (lmdb-js 3.x).
 *
 * Layout: one environment at `path` with three named databases
 * - `records`: `[stream, seq]` → msgpack `{ v, type, at, payload, msgId? }` (plain maps, see codec.ts)
 * - `msgids`:  `[stream, msgId]` → seq (idempotency)
 * - `keys`:    `[stream, key]` → seq (lookup keys a record registered, e.g. message ids)
 * - `global`:  global seq (1, 2, …) → `[stream, seq]` (tailing across streams)
 * A stream's head (last seq) is its last `records` key: read once per stream (one reverse cursor step) and then
 * kept in memory, so no per-batch head write is needed. `streams()` walks `records` one stream at a time.
 *
 * Group commit: `append` validates and encodes its records immediately (so a bad record rejects only its own
 * call), then queues them. One flush per event-loop turn (`setImmediate`) writes every queued append as lmdb-js
 * asynchronous puts issued in one synchronous run, which lmdb-js commits as ONE write transaction on its writer
 * thread; the flush awaits that transaction's promise, which lmdb-js resolves only after the commit is synced to
 * disk (default durability: overlapping sync, no `noSync`). At most one flush is in flight: appends arriving
 * meanwhile accumulate and go into the next transaction, so batches grow with load.
 *
 * One writer per path: sequence numbers come from in-memory heads, so only one `LmdbEventLog` (one process) may
 * append to a given environment at a time; other instances and processes may read it concurrently.
 *
 * Sequence numbers and duplicate checks are computed at flush time, in queue (= call) order, against the committed
 * state plus the batch itself; the order is therefore exactly the order of `append` calls. If the transaction
 * fails, every append in it rejects and nothing of the batch reaches the in-memory heads (they only advance after
 * a successful commit), so later appends reuse the same sequence numbers without gaps.
 */
import { asBinary, open, type Database, type RootDatabase } from 'lmdb';
import { Packr } from 'msgpackr';
import {
  RECORD_PACKR_OPTIONS,
  createRecordPackr,
  encodeInputs,
  toStoredRecord,
  validateStream,
} from './codec.ts';
import type {
  AppendInput,
  AppendResult,
  EventLog,
  GlobalReadOptions,
  GlobalRecord,
  ReadOptions,
  StoredRecord,
} from '@baton/log-schema';

export interface LmdbEventLogOptions {
  /** Directory of the LMDB environment (created when missing). */
  readonly path: string;
  /** Initial/maximum map size in bytes (lmdb-js grows the map automatically by default). */
  readonly mapSize?: number;
  /**
   * Open for reading only (LMDB's read-only mode; the environment must exist): for tools that look at a log another
   * process may be appending to. `append` then rejects.
   */
  readonly readOnly?: boolean;
}

type RecordKey = [string, number];
type MsgIdKey = [string, string];

interface PendingAppend {
  readonly stream: string;
  readonly inputs: readonly AppendInput[];
  readonly encoded: readonly Uint8Array[];
  readonly resolve: (results: AppendResult[]) => void;
  readonly reject: (error: unknown) => void;
}

const ignore = (): void => {};
/** Above every seq (seqs are safe integers): `[stream, PAST_LAST_SEQ]` sorts after all of the stream's keys. */
const PAST_LAST_SEQ = Number.MAX_SAFE_INTEGER + 1;
const EMPTY_RESULTS: readonly AppendResult[] = Object.freeze([]);
/** A caught value as a rejection reason: the same object when it is an Error, else wrapped (kept as `cause`). */
const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error), { cause: error }));

export class LmdbEventLog implements EventLog {
  /** Opens (or creates) the log at `options.path`. */
  static open(options: LmdbEventLogOptions): LmdbEventLog {
    const env = open({
      path: options.path,
      ...(options.mapSize === undefined ? {} : { mapSize: options.mapSize }),
      ...(options.readOnly === true ? { readOnly: true } : {}),
      maxDbs: 8,
    });
    try {
      return new LmdbEventLog(env, options.readOnly === true);
    } catch (error) {
      void env.close();
      throw error;
    }
  }

  private readonly env: RootDatabase;
  private readonly records: Database<unknown, RecordKey>;
  private readonly msgIds: Database<number, MsgIdKey>;
  private readonly keys: Database<number, MsgIdKey>;
  private readonly global: Database<RecordKey, number>;
  private readonly packr: Packr = createRecordPackr();

  /** Committed last seq per stream this instance appended to (seeded from `records` on the first append). */
  private readonly headCache = new Map<string, number>();
  /** Committed highest global seq. */
  private globalSeq: number;

  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private flushing = false;
  private closed = false;
  private readonly readOnly: boolean;
  private closePromise: Promise<void> | undefined;
  private drainWaiters: (() => void)[] = [];

  private constructor(env: RootDatabase, readOnly: boolean) {
    this.env = env;
    this.readOnly = readOnly;
    // decode with the same msgpackr (version and options) that encodes in codec.ts; lmdb-js constructs the
    // `Encoder` class with the msgpackr options found in the database options
    const recordsOptions = { encoding: 'msgpack' as const, encoder: { Encoder: Packr }, ...RECORD_PACKR_OPTIONS };
    this.records = env.openDB<unknown, RecordKey>('records', recordsOptions);
    this.msgIds = env.openDB<number, MsgIdKey>('msgids', { encoding: 'msgpack' });
    this.keys = env.openDB<number, MsgIdKey>('keys', { encoding: 'msgpack' });
    this.global = env.openDB<RecordKey, number>('global', { encoding: 'msgpack' });
    this.globalSeq = this.readLastGlobalSeq();
  }

  append(stream: string, records: readonly AppendInput[]): Promise<AppendResult[]> {
    if (this.closed) return Promise.reject(new Error('event log: closed'));
    if (this.readOnly) return Promise.reject(new Error('event log: opened read-only'));
    let encoded: Uint8Array[];
    try {
      encoded = encodeInputs(this.packr, stream, records);
    } catch (error) {
      return Promise.reject(toError(error));
    }
    return new Promise<AppendResult[]>((resolve, reject) => {
      this.queue.push({ stream, inputs: records, encoded, resolve, reject });
      this.scheduleFlush();
    });
  }

  read(stream: string, options: ReadOptions = {}): Iterable<StoredRecord> {
    this.assertOpen();
    validateStream(stream);
    const from = options.from ?? 1;
    const to = options.to;
    const limit = options.limit;
    if ((to !== undefined && to < from) || (limit !== undefined && limit <= 0)) return [];
    return this.records
      .getRange({
        start: [stream, from],
        end: [stream, to ?? Number.MAX_SAFE_INTEGER],
        inclusiveEnd: true,
        ...(limit === undefined ? {} : { limit }),
      })
      .map((entry) => toStoredRecord(entry.value, stream, entry.key[1]));
  }

  lastSeq(stream: string): number {
    this.assertOpen();
    // streams this instance appends to are answered from the cache; others are read from the database, so a
    // process that only reads (e.g. a replay tool next to a running daemon) sees other writers' commits
    return this.headCache.get(stream) ?? this.readHead(stream);
  }

  keySeq(stream: string, key: string): number | undefined {
    this.assertOpen();
    return this.keys.get([stream, key]);
  }

  *streams(prefix = ''): Iterable<string> {
    this.assertOpen();
    // one cursor step per stream: from the first key at or after [prefix], then past the last seq of each stream
    let start: RecordKey | [string] | undefined = prefix === '' ? undefined : [prefix];
    for (;;) {
      let next: string | undefined;
      for (const key of this.records.getKeys(start === undefined ? { limit: 1 } : { start, limit: 1 })) next = key[0];
      if (next === undefined || !next.startsWith(prefix)) return;
      yield next;
      start = [next, PAST_LAST_SEQ];
    }
  }

  /** Highest global sequence committed so far (0 when the log is empty). */
  lastGlobalSeq(): number {
    this.assertOpen();
    return this.globalSeq;
  }

  /** Records of all streams in commit order, starting at global sequence `from` (default 1). */
  *readGlobal(from = 1, options: GlobalReadOptions = {}): Iterable<GlobalRecord> {
    this.assertOpen();
    const limit = options.limit;
    if (limit !== undefined && limit <= 0) return;
    const range = this.global.getRange({ start: from, ...(limit === undefined ? {} : { limit }) });
    for (const { key, value } of range) {
      const [stream, seq] = value;
      const decoded = this.records.get([stream, seq]);
      if (decoded === undefined) continue;
      const record = toStoredRecord(decoded, stream, seq) as StoredRecord & { globalSeq: number };
      record.globalSeq = key;
      yield record;
    }
  }

  /**
   * Removes every record of `stream`, its message ids, its lookup keys and its entries in the global order, in one
   * durable transaction; the stream then starts again at seq 1. Walks the whole global order (rare: cluster mode
   * replacing a session's diverged local copy).
   */
  async removeStream(stream: string): Promise<void> {
    this.assertOpen();
    if (this.readOnly) throw new Error('event log: opened read-only');
    validateStream(stream);
    await this.flushed();
    // Keys first (read transaction), then one write transaction removes them all.
    const records = [...this.records.getKeys({ start: [stream, 0], end: [stream, PAST_LAST_SEQ] })];
    const named = (db: Database<number, MsgIdKey>): MsgIdKey[] => {
      const out: MsgIdKey[] = [];
      for (const key of db.getKeys({ start: [stream] })) {
        if (key[0] !== stream) break;
        out.push(key);
      }
      return out;
    };
    const msgIds = named(this.msgIds);
    const keys = named(this.keys);
    const globals: number[] = [];
    for (const { key, value } of this.global.getRange()) if (value[0] === stream) globals.push(key);
    this.env.transactionSync(() => {
      for (const key of records) this.records.removeSync(key);
      for (const key of msgIds) this.msgIds.removeSync(key);
      for (const key of keys) this.keys.removeSync(key);
      for (const key of globals) this.global.removeSync(key);
    });
    this.headCache.set(stream, 0);
  }

  /** Resolves once every append issued so far has been committed (or has failed). */
  flushed(): Promise<void> {
    if (this.queue.length === 0 && !this.flushing) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    this.closed = true;
    this.closePromise = this.flushed().then(() => this.env.close());
    return this.closePromise;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event log: closed');
  }

  private committedHead(stream: string): number {
    let head = this.headCache.get(stream);
    if (head === undefined) {
      head = this.readHead(stream);
      this.headCache.set(stream, head);
    }
    return head;
  }

  /** The stream's last committed seq: its last `records` key, 0 when it has none. */
  private readHead(stream: string): number {
    for (const key of this.records.getKeys({ start: [stream, PAST_LAST_SEQ], end: [stream, 0], reverse: true, limit: 1 })) {
      return key[1];
    }
    return 0;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing) return;
    this.flushScheduled = true;
    setImmediate(this.runFlush);
  }

  private readonly runFlush = (): void => {
    this.flushScheduled = false;
    if (this.flushing) return;
    const batch = this.queue;
    if (batch.length === 0) {
      this.notifyDrained();
      return;
    }
    this.queue = [];
    this.flushing = true;
    void this.commitBatch(batch).finally(() => {
      this.flushing = false;
      if (this.queue.length > 0) this.scheduleFlush();
      else this.notifyDrained();
    });
  };

  private notifyDrained(): void {
    if (this.drainWaiters.length === 0 || this.queue.length > 0 || this.flushing) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Writes one batch as one transaction; settles every append of the batch. */
  private async commitBatch(batch: PendingAppend[]): Promise<void> {
    const newHeads = new Map<string, number>();
    const batchMsgIds = new Map<string, Map<string, number>>();
    const results = new Array<AppendResult[]>(batch.length);
    const written: RecordKey[] = [];
    const writtenMsgIds: MsgIdKey[] = [];
    const writtenKeys: MsgIdKey[] = [];
    let globalSeq = this.globalSeq;
    let commit: Promise<boolean> | undefined;
    try {
      for (let b = 0; b < batch.length; b++) {
        const { stream, inputs, encoded } = batch[b] as PendingAppend;
        if (inputs.length === 0) {
          results[b] = EMPTY_RESULTS as AppendResult[];
          continue;
        }
        let head = newHeads.get(stream) ?? this.committedHead(stream);
        const out = new Array<AppendResult>(inputs.length);
        for (let i = 0; i < inputs.length; i++) {
          const msgId = (inputs[i] as AppendInput).msgId;
          if (msgId !== undefined) {
            let seen = batchMsgIds.get(stream);
            const original = seen?.get(msgId) ?? this.msgIds.get([stream, msgId]);
            if (original !== undefined) {
              out[i] = { seq: original, duplicate: true };
              continue;
            }
            head += 1;
            if (seen === undefined) batchMsgIds.set(stream, (seen = new Map<string, number>()));
            seen.set(msgId, head);
            const msgKey: MsgIdKey = [stream, msgId];
            writtenMsgIds.push(msgKey);
            // not awaited: every put of this synchronous run joins one transaction, whose commit is awaited below
            void this.msgIds.put(msgKey, head);
          } else {
            head += 1;
          }
          for (const lookup of (inputs[i] as AppendInput).keys ?? []) {
            const lookupKey: MsgIdKey = [stream, lookup];
            writtenKeys.push(lookupKey);
            // not awaited: same transaction as the other puts of this run (see `commit`)
            void this.keys.put(lookupKey, head);
          }
          const key: RecordKey = [stream, head];
          written.push(key);
          commit = this.records.put(key, asBinary(encoded[i] as Uint8Array));
          // not awaited: same transaction as the other puts of this run (see `commit`)
          void this.global.put(++globalSeq, key);
          out[i] = { seq: head, duplicate: false };
        }
        results[b] = out;
        newHeads.set(stream, head);
      }
    } catch (error) {
      // A synchronous failure after some puts were queued (not expected: inputs are validated and encoded up
      // front): undo them in the same lmdb-js batch so its transaction keeps nothing of this batch.
      this.compensate(written, [...writtenMsgIds, ...writtenKeys], globalSeq);
      this.rejectAll(batch, error);
      return;
    }
    if (commit !== undefined) {
      try {
        // all puts above belong to the same transaction and share its (durable) commit promise
        await commit;
      } catch (error) {
        this.rejectAll(batch, error);
        this.reseed();
        return;
      }
      for (const [stream, head] of newHeads) this.headCache.set(stream, head);
      this.globalSeq = globalSeq;
    }
    for (let b = 0; b < batch.length; b++) (batch[b] as PendingAppend).resolve(results[b] as AppendResult[]);
  }

  private compensate(written: RecordKey[], msgKeys: MsgIdKey[], toGlobal: number): void {
    try {
      for (const key of written) void this.records.remove(key).catch(ignore);
      for (const key of msgKeys) {
        void this.msgIds.remove(key).catch(ignore);
        void this.keys.remove(key).catch(ignore);
      }
      for (let g = this.globalSeq + 1; g <= toGlobal; g++) void this.global.remove(g).catch(ignore);
    } catch {
      // nothing more can be done synchronously; the batch is rejected anyway
    }
  }

  /**
   * After a failed commit, forgets every cached head and re-reads the global tail from the database. Normally the
   * failed transaction left nothing behind and this restores the pre-batch state; if the failure came after the data
   * was committed (e.g. the sync failed), the caches follow what is actually stored, so no seq is ever reused.
   */
  private reseed(): void {
    this.env.resetReadTxn();
    this.headCache.clear();
    this.globalSeq = this.readLastGlobalSeq();
  }

  private readLastGlobalSeq(): number {
    for (const key of this.global.getKeys({ reverse: true, limit: 1 })) return key;
    return 0;
  }

  private rejectAll(batch: PendingAppend[], error: unknown): void {
    for (const pending of batch) pending.reject(error);
  }
}

/** Functional alias of `LmdbEventLog.open`. */
export function openLmdbEventLog(options: LmdbEventLogOptions): LmdbEventLog {
  return LmdbEventLog.open(options);
}
