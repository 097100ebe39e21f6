import { Mailbox } from '@baton/client';
import { ProtocolError } from '@baton/protocol';
import type { Clock } from '../time/clock.ts';

/**
 * How many requests may wait, and how long: past `perSession` queued in one session or `total` in the daemon a
 * request is answered `unavailable` (reason `overloaded`) at once; one that waited `waitMs` for its turn is answered
 * `unavailable` (reason `timeout`) instead of being run. Slow storage then delays answers but cannot pile requests up
 * without bound. Work no request waits for (a writer's settlement, a timer, an eviction) is never refused.
 */
export interface QueueLimits {
  readonly perSession: number;
  readonly total: number;
  readonly waitMs: number;
}

/** Requests one session may have queued (its running one included). */
export const DEFAULT_QUEUED_PER_SESSION = 64;
/** Requests the daemon may have queued over all its sessions (`--max-queued-requests`). */
export const DEFAULT_QUEUED_REQUESTS = 4_096;

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
  readonly #clock: Clock;
  readonly #limits: QueueLimits;
  /** Requests queued or running, by session, and over all sessions. */
  readonly #requests = new Map<string, number>();
  #requestTotal = 0;
  /** Tasks queued or running, by session. */
  readonly #queued = new Map<string, number>();
  /** The append each session's queue holds alone, until a request follows it or it ends. */
  readonly #appends = new Map<string, AppendTurn<S>>();

  constructor(clock: Clock, limits: QueueLimits) {
    this.#clock = clock;
    this.#limits = limits;
  }

  /** Requests queued or running now, over all sessions. */
  get queuedRequests(): number {
    return this.#requestTotal;
  }

  /**
   * Runs a request in its session's turn: refused at once when the session's or the daemon's queue is full, and when
   * its turn comes after more than `waitMs`.
   */
  request<T>(sessionId: string, task: () => Promise<T>, options: { readonly timed?: boolean } = {}): Promise<T> {
    const admitted = this.#admit(sessionId);
    if (admitted instanceof ProtocolError) return Promise.reject(admitted);
    return this.run(sessionId, () => {
      if (options.timed !== false) this.#checkWait(sessionId, admitted.at);
      return task();
    }).finally(admitted.done);
  }

  /** The refusal a request for `sessionId` would get now, or null when it would be admitted. */
  #refusal(sessionId: string): ProtocolError | null {
    const queued = this.#requests.get(sessionId) ?? 0;
    if (queued >= this.#limits.perSession) {
      return new ProtocolError('unavailable', `session ${sessionId} has ${queued} requests queued, the most one session may have; retry once it answers them`, { reason: 'overloaded', queued });
    }
    if (this.#requestTotal >= this.#limits.total) {
      return new ProtocolError('unavailable', `the daemon has ${this.#requestTotal} requests queued, the most it takes (--max-queued-requests); retry later`, { reason: 'overloaded', queued: this.#requestTotal });
    }
    return null;
  }

  #admit(sessionId: string): ProtocolError | { at: number; done: () => void } {
    const refusal = this.#refusal(sessionId);
    if (refusal !== null) return refusal;
    const queued = this.#requests.get(sessionId) ?? 0;
    this.#requests.set(sessionId, queued + 1);
    this.#requestTotal++;
    const done = (): void => {
      this.#requestTotal--;
      const left = (this.#requests.get(sessionId) ?? 1) - 1;
      if (left > 0) this.#requests.set(sessionId, left);
      else this.#requests.delete(sessionId);
    };
    return { at: this.#clock.now(), done };
  }

  #checkWait(sessionId: string, at: number): void {
    const waited = this.#clock.now() - at;
    if (waited > this.#limits.waitMs) {
      throw new ProtocolError('unavailable', `the request waited ${waited} ms for its turn in session ${sessionId} (longer than ${this.#limits.waitMs} ms, waits.queue_ms); retry`, { reason: 'timeout' });
    }
  }

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
   * Runs an append request (admitted as `request` is). `task` calls `logged(session)` as soon as it has queued its
   * records for the log (before awaiting them); a request may follow it only while it is the first and only task of
   * its session's queue.
   */
  runAppend<T>(sessionId: string, task: (logged: (session: S) => void) => Promise<T>): Promise<T> {
    const admitted = this.#admit(sessionId);
    if (admitted instanceof ProtocolError) return Promise.reject(admitted);
    const turn = new AppendTurn<S>();
    if (!this.#queued.has(sessionId)) this.#appends.set(sessionId, turn);
    return this.run(sessionId, async () => {
      try {
        this.#checkWait(sessionId, admitted.at);
        return await task((session) => turn.logged(session));
      } finally {
        turn.close();
        if (this.#appends.get(sessionId) === turn) this.#appends.delete(sessionId);
      }
    }).finally(admitted.done);
  }

  /**
   * For a request arriving now, to be queued straight after this call: when the session's queue holds only an append,
   * a promise of that append's session once its records are queued for the log (null if it queues none, and then the
   * request goes as usual); null when the request cannot follow one. One request at most follows an append. The
   * request that follows is logged before its turn, so it must be admitted (`request`, untimed) right after this call:
   * it cannot follow when the queues would refuse it.
   */
  followAppend(sessionId: string): Promise<S | null> | null {
    const turn = this.#appends.get(sessionId);
    if (turn === undefined || this.#queued.get(sessionId) !== 1 || this.#refusal(sessionId) !== null) return null;
    this.#appends.delete(sessionId);
    return turn.follow();
  }

  /** Resolves when every task queued so far has finished. */
  idle(): Promise<void> {
    return this.#mailbox.idle();
  }
}
