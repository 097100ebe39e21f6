import type { AppendInput, AppendResult, EventLog, ReadOptions, StoredRecord } from '@baton/log-schema';

/**
 * The project's own event-log port with slow storage behind it: while `hold()`ing, an append is not handed to the log
 * underneath (nothing of it is committed, as with an fsync that does not return) until `release()`, which hands the
 * held appends over in the order they were made, in one turn (they may share a group commit). Reads go straight
 * through and see committed records only, as they would. Every other method is the wrapped log's.
 */
export class SlowCommitLog implements EventLog {
  readonly #log: EventLog;
  #holding = false;
  #held: (() => void)[] = [];
  #waiters: { readonly count: number; readonly resolve: () => void }[] = [];

  constructor(log: EventLog) {
    this.#log = log;
  }

  /** Appends from now on wait until `release()`. */
  hold(): void {
    this.#holding = true;
  }

  /** Hands every held append to the log, in order, and lets later appends through at once. */
  release(): void {
    this.#holding = false;
    const held = this.#held;
    this.#held = [];
    for (const go of held) go();
  }

  /** Appends held now. */
  get held(): number {
    return this.#held.length;
  }

  /** Resolves once at least `count` appends are held. */
  whenHeld(count: number): Promise<void> {
    if (this.#held.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  append(stream: string, records: readonly AppendInput[]): Promise<AppendResult[]> {
    if (!this.#holding) return this.#log.append(stream, records);
    return new Promise((resolve, reject) => {
      this.#held.push(() => void this.#log.append(stream, records).then(resolve, reject));
      this.#waiters = this.#waiters.filter((w) => {
        if (this.#held.length < w.count) return true;
        w.resolve();
        return false;
      });
    });
  }

  read(stream: string, options?: ReadOptions): Iterable<StoredRecord> {
    return this.#log.read(stream, options);
  }

  lastSeq(stream: string): number {
    return this.#log.lastSeq(stream);
  }

  keySeq(stream: string, key: string): number | undefined {
    return this.#log.keySeq(stream, key);
  }

  streams(prefix?: string): Iterable<string> {
    return this.#log.streams(prefix);
  }

  streamCounts(): ReadonlyMap<string, number> {
    return this.#log.streamCounts?.() ?? new Map();
  }

  flushed(): Promise<void> {
    return this.#log.flushed?.() ?? Promise.resolve();
  }

  close(): Promise<void> {
    this.release();
    return this.#log.close();
  }
}
