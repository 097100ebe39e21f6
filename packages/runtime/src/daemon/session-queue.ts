import { Mailbox } from '@baton/client';

/**
 * An append's place in the log, which the one request queued right behind it may share: the append hands over its
 * session once its records are queued for the log (`logged`), or nothing once it ends without queuing any (`close`).
 */
class AppendTurn<S> {
  #session: S | null = null;
  #closed = false;
  #handOver: ((session: S | null) => void) | null = null;

  /** Resolves with the session once the append's records are queued for the log, or with null if they never are. */
  follow(): Promise<S | null> {
    if (this.#session !== null || this.#closed) return Promise.resolve(this.#session);
    return new Promise((resolve) => {
      this.#handOver = resolve;
    });
  }

  logged(session: S): void {
    this.#session = session;
    this.#handOver?.(session);
    this.#handOver = null;
  }

  close(): void {
    this.#closed = true;
    this.#handOver?.(this.#session);
    this.#handOver = null;
  }
}

/**
 * The session service's queue: one task at a time per session, in arrival order (a session accepts requests one at a
 * time), sessions independent of one another. A request that arrives while the only task queued for its session is
 * an append may follow that append into the log: it learns the moment the append's records are queued, queues its
 * own right behind them (the log then commits both in one transaction instead of two in turn), and is folded in its
 * own turn, after the append. `S` is what the append hands over: the session it loaded.
 */
export class SessionQueue<S> {
  readonly #mailbox = new Mailbox();
  /** Tasks queued or running, by session. */
  readonly #queued = new Map<string, number>();
  /** The append each session's queue holds alone, until a request follows it or it ends. */
  readonly #appends = new Map<string, AppendTurn<S>>();

  run<T>(sessionId: string, task: () => Promise<T>): Promise<T> {
    this.#queued.set(sessionId, (this.#queued.get(sessionId) ?? 0) + 1);
    const done = (): void => {
      const left = (this.#queued.get(sessionId) ?? 1) - 1;
      if (left > 0) this.#queued.set(sessionId, left);
      else this.#queued.delete(sessionId);
    };
    return this.#mailbox.run(sessionId, task).finally(done);
  }

  /**
   * Runs an append. `task` calls `logged(session)` as soon as it has queued its records for the log (before awaiting
   * them); a request may follow it only while it is the first and only task of its session's queue.
   */
  runAppend<T>(sessionId: string, task: (logged: (session: S) => void) => Promise<T>): Promise<T> {
    const turn = new AppendTurn<S>();
    if (!this.#queued.has(sessionId)) this.#appends.set(sessionId, turn);
    return this.run(sessionId, async () => {
      try {
        return await task((session) => turn.logged(session));
      } finally {
        turn.close();
        if (this.#appends.get(sessionId) === turn) this.#appends.delete(sessionId);
      }
    });
  }

  /**
   * For a request arriving now, to be queued straight after this call: when the session's queue holds only an append,
   * a promise of that append's session once its records are queued for the log (null if it queues none, and then the
   * request goes as usual); null when the request cannot follow one. One request at most follows an append.
   */
  followAppend(sessionId: string): Promise<S | null> | null {
    const turn = this.#appends.get(sessionId);
    if (turn === undefined || this.#queued.get(sessionId) !== 1) return null;
    this.#appends.delete(sessionId);
    return turn.follow();
  }

  /** Resolves when every task queued so far has finished. */
  idle(): Promise<void> {
    return this.#mailbox.idle();
  }
}
