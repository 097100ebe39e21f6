import type { SessionAppend } from '@baton/log-schema';
import type { Clock, TimerHandle } from '../time/clock.ts';

/**
 * Decision and snapshot records are derived data (replay recomputes them), recorded so that `replay --verify` can
 * detect divergence and loading can start from a recent state. They are written with the session's next input, or
 * after `flushMs` idle, so they never cost a request a commit of its own.
 */
export class DecisionQueue {
  readonly #pending = new Map<string, { records: SessionAppend[]; timer: TimerHandle }>();
  /** Idle flushes whose append has not resolved yet (`flushAll` waits for them too). */
  readonly #writing = new Set<Promise<void>>();
  readonly #clock: Clock;
  readonly #flushMs: number;
  readonly #write: (sessionId: string, records: SessionAppend[]) => Promise<unknown>;

  constructor(clock: Clock, flushMs: number, write: (sessionId: string, records: SessionAppend[]) => Promise<unknown>) {
    this.#clock = clock;
    this.#flushMs = flushMs;
    this.#write = write;
  }

  /** Queues a decision of `sessionId`, arming the idle flush. */
  queue(sessionId: string, record: SessionAppend): void {
    const pending = this.#pending.get(sessionId);
    if (pending !== undefined) {
      pending.records.push(record);
      return;
    }
    const timer = this.#clock.setTimeout(() => void this.#flush(sessionId), this.#flushMs);
    this.#pending.set(sessionId, { records: [record], timer });
  }

  /** Takes the queued decisions of `sessionId` to write them with its next input. */
  take(sessionId: string): SessionAppend[] {
    const pending = this.#pending.get(sessionId);
    if (pending === undefined) return [];
    this.#pending.delete(sessionId);
    this.#clock.clearTimeout(pending.timer);
    return pending.records;
  }

  /** Puts back records `take` gave for an input whose append failed: they go with the session's next input. */
  putBack(sessionId: string, records: readonly SessionAppend[]): void {
    if (records.length === 0) return;
    const later = this.take(sessionId);
    for (const record of [...records, ...later]) this.queue(sessionId, record);
  }

  #flush(sessionId: string): Promise<void> {
    const records = this.take(sessionId);
    if (records.length === 0) return Promise.resolve();
    const writing = this.#write(sessionId, records).then(
      () => {},
      () => {},
    );
    this.#writing.add(writing);
    void writing.then(() => this.#writing.delete(writing));
    return writing;
  }

  /** Writes the queued records of `sessionId` now; resolves once they are durable. */
  flush(sessionId: string): Promise<void> {
    return this.#flush(sessionId);
  }

  /** Writes every queued decision now; resolves once they, and idle flushes already under way, are durable. */
  async flushAll(): Promise<void> {
    await Promise.all([...[...this.#pending.keys()].map((sid) => this.#flush(sid)), ...this.#writing]);
  }
}
