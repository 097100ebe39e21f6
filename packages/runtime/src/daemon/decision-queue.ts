import type { AppendInput } from '@baton/log-schema';

/** How long an idle session's decisions wait for a next input before they are written on their own. */
const DECISION_FLUSH_MS = 50;

/**
 * Decision records are derived data (replay recomputes them), recorded so that `replay --verify` can detect
 * divergence. They are written with the session's next input, or after a short idle delay, so they never cost a
 * request a commit of its own.
 */
export class DecisionQueue {
  readonly #pending = new Map<string, { records: AppendInput[]; timer: ReturnType<typeof setTimeout> }>();
  readonly #write: (sessionId: string, records: AppendInput[]) => Promise<unknown>;

  constructor(write: (sessionId: string, records: AppendInput[]) => Promise<unknown>) {
    this.#write = write;
  }

  /** Queues a decision of `sessionId`, arming the idle flush. */
  queue(sessionId: string, record: AppendInput): void {
    const pending = this.#pending.get(sessionId);
    if (pending !== undefined) {
      pending.records.push(record);
      return;
    }
    const timer = setTimeout(() => void this.#flush(sessionId), DECISION_FLUSH_MS);
    timer.unref();
    this.#pending.set(sessionId, { records: [record], timer });
  }

  /** Takes the queued decisions of `sessionId` to write them with its next input. */
  take(sessionId: string): AppendInput[] {
    const pending = this.#pending.get(sessionId);
    if (pending === undefined) return [];
    this.#pending.delete(sessionId);
    clearTimeout(pending.timer);
    return pending.records;
  }

  async #flush(sessionId: string): Promise<void> {
    const records = this.take(sessionId);
    if (records.length > 0) await this.#write(sessionId, records).catch(() => {});
  }

  /** Writes every queued decision now. */
  async flushAll(): Promise<void> {
    await Promise.all([...this.#pending.keys()].map((sid) => this.#flush(sid)));
  }
}
