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
 * call), then queues them. One flush per event-loop turn (`setImmediate`) writes every queued append in ONE
 * explicit write transaction (`env.transaction`: its body puts them all once lmdb-js starts it); the flush awaits
 * that transaction's promise, which lmdb-js resolves only after the commit is synced to disk (default durability:
 * overlapping sync, no `noSync`). At most one flush is in flight: appends arriving meanwhile accumulate and go into
 * the next transaction, so batches grow with load.
 *
 * One writer per path: sequence numbers come from in-memory heads, so only one `LmdbEventLog` (one process) may
 * append to a given environment at a time; other instances and processes may read it concurrently.
 *
 * Sequence numbers and duplicate checks are computed at flush time, in queue (= call) order, against the committed
 * state plus the batch itself; the order is therefore exactly the order of `append` calls. If the transaction
 * fails, every append in it rejects and nothing of the batch reaches the in-memory heads (they only advance after
 * a successful commit), so later appends reuse the same sequence numbers without gaps. A commit that fails for want
 * of storage (a full disk, an I/O error) rejects with `unavailable`, reason `storage`; the log takes appends again as
 * soon as storage has room, without a reopen. The map grows by itself (lmdb-js doubles it when it is full), so
 * `mapSize` is only where it starts.
 */
import type { RootDatabase } from 'lmdb';
import { Packr } from 'msgpackr';
import { openEnv, type LmdbEventLogOptions } from './lmdb-env.ts';
import { openDatabases, removeStreamEntries, type LogDatabases } from './lmdb-databases.ts';
import { StreamCounts } from './stream-counts.ts';
import { writeBatch, type BatchWrite, type PendingAppend } from './batch-write.ts';
import { storageError } from './storage-error.ts';
import { PAST_LAST_SEQ, globalRecords, streamsOf } from './lmdb-reads.ts';
import { DEFAULT_RELEASE_MAPPED_BYTES, MappedPages, encodedBytes, residentFileBytes } from './mapped-pages.ts';
import {
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

export type { LmdbEventLogOptions } from './lmdb-env.ts';

/** How often resident file pages are probed besides after commits. */
const MAPPED_CHECK_MS = 1_000;
const closeEnv = (env: RootDatabase): Promise<void> => env.close();
/** A caught value as a rejection reason: the same object when it is an Error, else wrapped (kept as `cause`). */
const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error), { cause: error }));

export class LmdbEventLog implements EventLog {
  /** Opens (or creates) the log at `options.path`. */
  static open(options: LmdbEventLogOptions): LmdbEventLog {
    const env = openEnv(options);
    try {
      return new LmdbEventLog(env, options);
    } catch (error) {
      void env.close();
      throw error;
    }
  }

  private env: RootDatabase;
  private dbs!: LogDatabases;
  private readonly options: LmdbEventLogOptions;
  private readonly mapped: MappedPages;
  private releases = 0;
  /** Reads that came while a release's close was pending and reopened at once (see `releaseMapped`). */
  private earlyReopens = 0;
  /** Streams per kind once `streamCounts()` was asked for (see there). */
  private counts: StreamCounts | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  /** Iterations over the log under way (a reopen waits for none). */
  private iterating = 0;
  /** A release of mapped pages is under way: flushes wait for it (see `releaseMapped`). */
  private releasing = false;
  /** The environment whose close `releaseMapped` started and that is not closed yet. */
  private closing: RootDatabase | undefined;
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

  private constructor(env: RootDatabase, options: LmdbEventLogOptions) {
    this.env = env;
    this.options = options;
    this.readOnly = options.readOnly === true;
    const budget = options.releaseMappedBytes ?? DEFAULT_RELEASE_MAPPED_BYTES;
    this.mapped = new MappedPages(budget, options.residentFileProbe ?? residentFileBytes);
    this.attach(env);
    this.globalSeq = this.readLastGlobalSeq();
    if (budget > 0) {
      this.probeTimer = setInterval(this.checkMapped, MAPPED_CHECK_MS);
      this.probeTimer.unref();
    }
  }

  /** Timer: pages touched by reads alone make a reopen due too; it runs in the next flush turn. */
  private readonly checkMapped = (): void => {
    if (this.mapped.check()) this.scheduleFlush();
  };

  /** Opens the named databases of `env` (at construction and after each reopen). */
  private attach(env: RootDatabase): void {
    this.dbs = openDatabases(env);
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
    return this.iterate(() =>
      this.dbs.records
        .getRange({
          start: [stream, from],
          end: [stream, to ?? Number.MAX_SAFE_INTEGER],
          inclusiveEnd: true,
          ...(limit === undefined ? {} : { limit }),
        })
        .map((entry) => toStoredRecord(entry.value, stream, entry.key[1])),
    );
  }

  /**
   * A lazy, repeatable iteration over the databases open when it starts (not when it was asked for), counted in
   * `iterating` while it runs, so a reopen never pulls the databases from under it.
   */
  private iterate<T>(source: () => Iterable<T>): Iterable<T> {
    return { [Symbol.iterator]: () => this.counted(source) };
  }

  private *counted<T>(source: () => Iterable<T>): Generator<T> {
    this.assertOpen();
    this.iterating += 1;
    try {
      yield* source();
    } finally {
      this.iterating -= 1;
    }
  }

  lastSeq(stream: string): number {
    this.assertOpen();
    // streams this instance appends to are answered from the cache; others are read from the database, so a
    // process that only reads (e.g. a replay tool next to a running daemon) sees other writers' commits
    return this.headCache.get(stream) ?? this.readHead(stream);
  }

  keySeq(stream: string, key: string): number | undefined {
    this.assertOpen();
    return this.dbs.keys.get([stream, key]);
  }

  streams(prefix = ''): Iterable<string> {
    this.assertOpen();
    return this.iterate(() => streamsOf(this.dbs.records, prefix));
  }

  /**
   * Streams per kind: one walk on the first call, then kept in step with this instance's appends and removals. A
   * read-only log walks on every call (another process may be appending).
   */
  streamCounts(): ReadonlyMap<string, number> {
    this.assertOpen();
    if (this.readOnly) {
      // a fresh snapshot: lmdb-js renews a read snapshot only a timer tick after another handle's commit
      this.env.resetReadTxn();
      return StreamCounts.of(this.streams()).snapshot();
    }
    this.counts ??= StreamCounts.of(this.streams());
    return this.counts.snapshot();
  }

  /** How many times the environment was reopened to release mapped pages. */
  get mappedReleases(): number {
    return this.releases;
  }

  /** How many releases a read overtook, reopening before the close settled (that release then unmaps nothing). */
  get earlyMappedReopens(): number {
    return this.earlyReopens;
  }

  /** Highest global sequence committed so far (0 when the log is empty). */
  lastGlobalSeq(): number {
    this.assertOpen();
    return this.globalSeq;
  }

  /** Records of all streams in commit order, starting at global sequence `from` (default 1). */
  readGlobal(from = 1, options: GlobalReadOptions = {}): Iterable<GlobalRecord> {
    this.assertOpen();
    const limit = options.limit;
    if (limit !== undefined && limit <= 0) return [];
    return this.iterate(() => globalRecords(this.dbs.global, this.dbs.records, from, limit));
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
    const removed = removeStreamEntries(this.env, this.dbs, stream);
    if (removed > 0) this.counts?.removed(stream);
    this.headCache.set(stream, 0);
  }

  /** Resolves once every append issued so far has been committed (or has failed). */
  flushed(): Promise<void> {
    if (this.queue.length === 0 && !this.flushing && !this.releasing) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    this.closed = true;
    clearInterval(this.probeTimer);
    this.closePromise = this.flushed().then(() => this.env.close());
    return this.closePromise;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event log: closed');
    if (this.closing !== undefined && this.env === this.closing) this.reopenEarly();
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
    for (const key of this.dbs.records.getKeys({ start: [stream, PAST_LAST_SEQ], end: [stream, 0], reverse: true, limit: 1 })) {
      return key[1];
    }
    return 0;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.flushing || this.releasing) return;
    this.flushScheduled = true;
    setImmediate(this.runFlush);
  }

  private readonly runFlush = (): void => {
    this.flushScheduled = false;
    if (this.flushing || this.releasing) return;
    if (this.mapped.due() && this.iterating === 0 && !this.closed) {
      this.releaseMapped();
      return;
    }
    const batch = this.queue;
    if (batch.length === 0) {
      this.notifyDrained();
      return;
    }
    this.queue = [];
    this.flushing = true;
    void this.commitBatch(batch).finally(() => {
      this.flushing = false;
      if (this.mapped.committed(encodedBytes(batch))) {
        // a reopen is due: the next flush turn does it before writing anything more
        this.scheduleFlush();
        return;
      }
      if (this.queue.length > 0) this.scheduleFlush();
      else this.notifyDrained();
    });
  };

  /**
   * Closes and reopens the environment, which unmaps the data file: LMDB reads pages through its memory map, and
   * every page the log ever touched (each page of an append-only tree is read once more when the next append
   * copies it) otherwise stays in this process's resident set for good. They are clean file pages the kernel could
   * drop, but they count as the daemon's memory in every tool that shows it.
   *
   * Called from a flush turn with no write in flight and no iteration under way; flushes wait until it is done.
   * First lmdb-js's last commit and sync are awaited (the environment stays readable meanwhile), so that its close
   * of an environment without pending work settles in microtasks and no other code runs between the close and the
   * reopen. Should a read come in while the close is still pending all the same, it reopens at once
   * (`reopenEarly`): the read is served and only that release is lost, since LMDB keeps one mapping per path while
   * any handle on it is open.
   */
  private releaseMapped(): void {
    this.releasing = true;
    const old = this.env;
    const startClose = (): void => {
      // an iteration may have started while the sync was awaited: try again at a later flush turn
      if (this.iterating > 0 || this.env !== old) return this.releaseDone();
      this.closing = old;
      (this.options.closeForRelease ?? closeEnv)(old).then(
        () => this.reopenAfter(old),
        (error: unknown) => {
          // the old environment may be half closed: reopening is still the only way on
          console.error('event log: closing the environment to release mapped pages failed', error);
          this.reopenAfter(old);
        },
      );
    };
    Promise.resolve(old.flushed).then(
      () => setImmediate(startClose),
      () => setImmediate(startClose),
    );
  }

  /** The close of `old` settled: opens the environment again unless a read already did. */
  private reopenAfter(old: RootDatabase): void {
    this.closing = undefined;
    if (this.env === old) {
      this.attachNew();
      this.mapped.released();
      this.releases += 1;
    }
    this.releaseDone();
  }

  /** A read while the close is pending: the environment is opened again now (see `releaseMapped`). */
  private reopenEarly(): void {
    this.attachNew();
    this.earlyReopens += 1;
  }

  /** Opens the environment again; `close()` called meanwhile closes whichever environment is current. */
  private attachNew(): void {
    this.env = openEnv(this.options);
    this.attach(this.env);
  }

  private releaseDone(): void {
    this.releasing = false;
    if (this.queue.length > 0) this.scheduleFlush();
    else this.notifyDrained();
  }

  private notifyDrained(): void {
    if (this.drainWaiters.length === 0 || this.queue.length > 0 || this.flushing || this.releasing) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter();
  }

  /**
   * Writes one batch as one write transaction (`env.transaction`, whose body runs when lmdb-js starts it and whose
   * promise resolves once the commit is durable); settles every append of the batch. Sequence numbers and duplicate
   * checks are computed in the body, against the committed state plus the batch. A commit that fails (a full disk,
   * an I/O error) leaves nothing of the batch, and every append of it rejects `unavailable` (reason `storage`).
   */
  private async commitBatch(batch: PendingAppend[]): Promise<void> {
    let written: BatchWrite;
    let bodyError: { error: unknown } | null = null;
    try {
      written = await this.env.transaction(() => {
        try {
          return writeBatch(this.dbs, batch, (stream) => this.committedHead(stream), this.globalSeq);
        } catch (error) {
          // Not expected (inputs are validated and encoded up front): thrown out of the body, it aborts the
          // transaction, so nothing of the batch is kept.
          bodyError = { error };
          throw error;
        }
      });
    } catch (error) {
      if (bodyError !== null) {
        this.headCache.clear();
        this.rejectAll(batch, (bodyError as { error: unknown }).error);
        return;
      }
      this.rejectAll(batch, await storageError(error));
      this.reseed();
      return;
    }
    const { results, newHeads, globalSeq, wrote } = written;
    if (wrote) {
      for (const [stream, head] of newHeads) {
        if (this.headCache.get(stream) === 0 && head > 0) this.counts?.added(stream);
        this.headCache.set(stream, head);
      }
      this.globalSeq = globalSeq;
    }
    for (let b = 0; b < batch.length; b++) (batch[b] as PendingAppend).resolve(results[b] as AppendResult[]);
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
    for (const key of this.dbs.global.getKeys({ reverse: true, limit: 1 })) return key;
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
