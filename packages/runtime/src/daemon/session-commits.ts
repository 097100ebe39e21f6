import { isMainEffect } from '@baton/actors';
import { SNAPSHOT_KEY, sessionStream, type SessionAppend, type SessionInputRecord, type SessionRecordSchemas, type StoredSessionRecord, type StreamLog } from '@baton/log-schema';
import type { HostPool } from '../host/host-pool.ts';
import { CommitThenFold, type Durable } from '../pipeline/commit-then-fold.ts';
import type { FoldReply } from '../host/worker-messages.ts';
import { firstDifference } from '../replay/plain-diff.ts';
import type { Clock } from '../time/clock.ts';
import type { DecisionQueue } from './decision-queue.ts';
import type { FoldSignal } from './fold-signal.ts';
import type { LoadedSession } from './loaded-session.ts';
import { runMainEffect, type MainEffectDeps } from './main-effects.ts';

export interface SessionCommitsOptions {
  /** The sessions' records in the event log. */
  readonly log: StreamLog<SessionRecordSchemas>;
  readonly pool: HostPool;
  readonly clock: Clock;
  /** Decisions and snapshots queued to ride with a session's next input. */
  readonly decisions: DecisionQueue;
  /** Told of every fold (waits for a writer's settlement listen to it). */
  readonly folded: FoldSignal;
  /** What the effects that belong on the main thread use (publish, timers). */
  readonly effects: MainEffectDeps;
  /** A snapshot is queued after this many folds. */
  readonly snapshotEvery: number;
  /** A fold failed in the worker (a session whose log cannot be folded is quarantined). */
  readonly foldFailed: (sessionId: string, err: unknown) => void;
  /** `count` more requests of the session did not fit the model's window. */
  readonly overWindow: (sessionId: string, count: number) => void;
}

/** One input of a session as it is committed: the lookup keys it registers go with it. */
interface SessionCommit {
  readonly sessionId: string;
  readonly input: SessionInputRecord;
  readonly keys: readonly string[] | undefined;
}

/**
 * The sessions' commit-then-fold pipeline: an input is durable in the session's log (with the decisions and snapshot
 * queued before it, in the same transaction) before the session's actor folds it; the fold's decision is queued for
 * the next commit.
 */
export class SessionCommits {
  readonly #o: SessionCommitsOptions;
  readonly #pipeline: CommitThenFold<LoadedSession, SessionCommit, StoredSessionRecord, Promise<FoldReply>>;

  constructor(options: SessionCommitsOptions) {
    this.#o = options;
    this.#pipeline = new CommitThenFold({
      commit: ({ sessionId, input, keys }) => this.#commit(sessionId, input, keys),
      fold: (session, record) => this.#fold(session, record),
    });
  }

  /** Appends one input (with the session's queued derived records in the same transaction); resolves when durable. */
  append(sessionId: string, input: SessionInputRecord, keys?: readonly string[]): Promise<Durable<StoredSessionRecord>> {
    return this.#pipeline.commit({ sessionId, input, keys });
  }

  /** Folds a durable record in the session's actor and runs the effects that belong on this thread. */
  fold(session: LoadedSession, record: Durable<StoredSessionRecord>): Promise<FoldReply> {
    return this.#pipeline.fold(session, record);
  }

  /** Appends one input of `session`, then folds it. */
  consume(session: LoadedSession, input: SessionInputRecord): Promise<FoldReply> {
    return this.#pipeline.consume(session, { sessionId: session.sessionId, input, keys: undefined });
  }

  async #commit(sessionId: string, input: SessionInputRecord, keys: readonly string[] | undefined): Promise<StoredSessionRecord> {
    const record: SessionAppend = { ...input, at: this.#o.clock.now(), ...(keys !== undefined ? { keys } : {}) };
    // Decisions of earlier inputs ride in the same transaction: no commit of their own on the request path.
    const derived = this.#o.decisions.take(sessionId);
    let results;
    try {
      results = await this.#o.log.append(sessionId, [...derived, record]);
    } catch (err) {
      // Nothing of the transaction was kept (a full disk: `unavailable`, reason `storage`): the decisions wait for
      // the next input, and the session stays as it was, neither folded nor set aside.
      this.#o.decisions.putBack(sessionId, derived);
      throw err;
    }
    const res = results.at(-1);
    if (res === undefined) throw new Error('event log returned no result');
    return { ...input, at: record.at, v: 1, stream: sessionStream(sessionId), seq: res.seq };
  }

  async #fold(session: LoadedSession, record: StoredSessionRecord): Promise<FoldReply> {
    let reply: FoldReply;
    try {
      reply = await this.#o.pool.call(session.sessionId, 'session.fold', { sessionId: session.sessionId, record });
    } catch (err) {
      this.#o.foldFailed(session.sessionId, err);
      throw err;
    }
    const before = session.summary;
    session.summary = reply.summary;
    const overWindow = (reply.summary.overWindow ?? 0) - (before.overWindow ?? 0);
    if (overWindow > 0) this.#o.overWindow(session.sessionId, overWindow);
    for (const effect of reply.effects) if (isMainEffect(effect)) runMainEffect(session, effect, reply, this.#o.effects);
    this.#o.folded.notify();
    // An input that changed nothing (no effect, the same state) needs no decision record: replay treats a missing
    // decision as nothing to compare, and most appends (a user message, a tool result) are such inputs.
    if (reply.effects.length > 0 || firstDifference(before, reply.summary) !== null) {
      this.#o.decisions.queue(session.sessionId, { type: 'decision', at: this.#o.clock.now(), payload: { for: record.seq, state: reply.summary, effects: [...reply.effects] } });
    }
    if (++session.sinceSnapshot >= this.#o.snapshotEvery) await this.queueSnapshot(session);
    return reply;
  }

  /** Queues a snapshot of the session's folded state; it is written with the session's next records. */
  async queueSnapshot(session: LoadedSession): Promise<void> {
    const snapshot = await this.#o.pool.call(session.sessionId, 'session.snapshot', { sessionId: session.sessionId });
    this.#o.decisions.queue(session.sessionId, { type: 'snapshot', at: this.#o.clock.now(), payload: snapshot, keys: [SNAPSHOT_KEY] });
    session.sinceSnapshot = 0;
  }
}
