import type { EventLog, SessionRecordSchemas, StreamLog } from '@baton/log-schema';
import { ProtocolError } from '@baton/protocol';
import type { HostExit, HostPool } from '../host/host-pool.ts';
import type { SessionSummary } from '../host/worker-messages.ts';
import type { Clock } from '../time/clock.ts';
import type { DecisionQueue } from './decision-queue.ts';
import type { EffectTimers } from './effect-timers.ts';
import { failAllWaiting, newLoadedSession, type LoadedSession } from './loaded-session.ts';
import { restartSettlement } from './logged-settlement.ts';
import { ResidentSessions, type Residency } from './resident-sessions.ts';
import { RESTART_STEPS, loadActor, type ActorLoadDeps } from './session-actor-load.ts';
import type { SessionCommits } from './session-commits.ts';
import type { SessionQueue } from './session-queue.ts';
import type { WriterKeys } from './writer-keys.ts';

export interface SessionRegistryOptions {
  /** The sessions' records in the event log. */
  readonly sessions: StreamLog<SessionRecordSchemas>;
  /** The event log itself (a session's load reads its snapshot and the inputs after it). */
  readonly log: EventLog;
  readonly pool: HostPool;
  readonly clock: Clock;
  readonly residency: Residency;
  /** Whether this daemon holds the session: one it does not hold is never loaded. */
  readonly holds: (sessionId: string) => boolean;
  /** The sessions' mailboxes: an eviction or a reload takes its session's turn. */
  readonly queue: SessionQueue<LoadedSession>;
  readonly timers: EffectTimers;
  readonly decisions: DecisionQueue;
  readonly commits: SessionCommits;
  readonly writerKeys: WriterKeys;
  /** Logs a failure no request is waiting to hear of. */
  readonly logError?: ((msg: string, data: Record<string, unknown>) => void) | undefined;
}

/**
 * Which sessions are in memory, and which are set aside: loads a session on first use (from its newest snapshot and
 * the inputs after it), keeps only the sessions in use (a session that left loads again), quarantines a session whose
 * log cannot be folded, and drops sessions whose actor died with its worker or that another daemon took over.
 */
export class SessionRegistry {
  readonly #o: SessionRegistryOptions;
  /** Resident sessions, least recently used first. */
  readonly #sessions: ResidentSessions<LoadedSession>;
  readonly #quarantined = new Map<string, ProtocolError>();
  readonly #loadDeps: ActorLoadDeps;
  /** Set once this daemon drains: sessions it loads afterwards stay drained. */
  #draining = false;
  /** Sessions whose actor died with its worker thread, with that exit, until they are loaded again. */
  readonly #lostActors = new Map<string, string>();

  constructor(options: SessionRegistryOptions) {
    this.#o = options;
    this.#sessions = new ResidentSessions<LoadedSession>({
      clock: options.clock,
      residency: options.residency,
      idle: (session) => this.evictable(session),
      evict: (sessionId) => void this.evict(sessionId),
    });
    this.#sessions.startSweep();
    this.#loadDeps = {
      sessions: options.sessions,
      log: options.log,
      pool: options.pool,
      quarantined: (sessionId, error) => void this.#quarantined.set(sessionId, error),
      quarantineOn: (sessionId, err) => this.quarantineOn(sessionId, err),
    };
  }

  /** Sessions in memory now. */
  get size(): number {
    return this.#sessions.size;
  }

  /** The session if in memory (not marked as used). */
  get(sessionId: string): LoadedSession | undefined {
    return this.#sessions.get(sessionId);
  }

  values(): IterableIterator<LoadedSession> {
    return this.#sessions.values();
  }

  keys(): IterableIterator<string> {
    return this.#sessions.keys();
  }

  /** The summaries of the sessions in memory now, by session id (as their actors last reported them). */
  summaries(): Map<string, SessionSummary> {
    return new Map([...this.#sessions.values()].map((s) => [s.sessionId, s.summary]));
  }

  /** Sessions set aside because their log cannot be folded, with the error their requests get. */
  quarantinedSessions(): Map<string, ProtocolError> {
    return new Map(this.#quarantined);
  }

  /** The error a quarantined session's requests get (undefined: not quarantined). */
  quarantinedError(sessionId: string): ProtocolError | undefined {
    return this.#quarantined.get(sessionId);
  }

  /** The daemon drains: sessions loaded from now on stay drained. */
  drain(): void {
    this.#draining = true;
  }

  /** Stops the idle sweep (on shutdown). */
  stopSweep(): void {
    this.#sessions.stopSweep();
  }

  /**
   * Sets a session aside when its log cannot be folded (the error says which record): its requests get that error,
   * the log is left as it is, and every other session keeps serving.
   */
  quarantineOn(sessionId: string, err: unknown): void {
    if ((err as { code?: unknown }).code !== 'quarantined' || !(err instanceof ProtocolError)) return;
    this.#quarantined.set(sessionId, err);
    this.#sessions.delete(sessionId);
    this.#o.pool.release(sessionId);
  }

  /** The session if in memory and held here (marked as used): a request's common case, without an await. */
  resident(sessionId: string): LoadedSession | undefined {
    if (!this.#o.holds(sessionId)) return undefined;
    const existing = this.#sessions.get(sessionId);
    return existing === undefined ? undefined : this.#sessions.touch(existing);
  }

  /** Loads a session from its newest snapshot and the inputs after it (after a restart, an eviction or on first use). */
  async load(sessionId: string): Promise<LoadedSession> {
    const resident = this.resident(sessionId);
    if (resident !== undefined) return resident;
    if (!this.#o.holds(sessionId)) {
      throw new ProtocolError('unavailable', `session ${sessionId} is not held by this daemon; open it again`, { reason: 'moved' });
    }
    const quarantined = this.#quarantined.get(sessionId);
    if (quarantined !== undefined) throw quarantined;
    const { load, reply } = await loadActor(this.#loadDeps, sessionId);
    const session = newLoadedSession(sessionId, load, reply, this.#o.clock.now());
    // Posted before any fold below: a writer a restart step starts already has it.
    this.#o.writerKeys.loaded(sessionId);
    this.#sessions.add(session);
    const lost = this.#lostActors.get(sessionId) ?? null;
    this.#lostActors.delete(sessionId);
    const commits = this.#o.commits;
    for (const step of RESTART_STEPS) {
      const input = step(session.summary, this.#draining, lost, (writerId) => restartSettlement(this.#o.sessions.log, writerId));
      if (input !== null) await commits.consume(session, input);
    }
    this.#sessions.makeRoom(sessionId);
    return session;
  }

  /** A session may leave memory when nothing of it is under way: no writer, rebuild, close, waiting reply or timer. */
  evictable(s: LoadedSession): boolean {
    const { writer, rebuilding, closing } = s.summary;
    return writer === 'idle' && !rebuilding && !closing && s.replies.size === 0 && !this.#o.timers.pending(s.sessionId);
  }

  /**
   * Takes a session out of memory: its queued decisions and a snapshot of its state are written (so it loads again
   * from there), then its actor leaves the worker. A request for it afterwards loads it again.
   */
  evict(sessionId: string): Promise<void> {
    return this.#o.queue
      .run(sessionId, async () => {
        const s = this.#sessions.get(sessionId);
        if (s === undefined || !this.evictable(s)) return;
        if (s.sinceSnapshot > 0) await this.#o.commits.queueSnapshot(s);
        await this.#o.decisions.flush(sessionId);
        this.#sessions.delete(sessionId);
        await this.#o.pool.call(sessionId, 'session.unload', { sessionId });
        this.#o.pool.release(sessionId);
      })
      .catch(() => {});
  }

  /**
   * Drops a session from memory without writing anything for it (cluster mode: another daemon took it over, or this
   * one handed it off): its queued decisions are discarded, its timers cancelled, its running writer cancelled and
   * its waiting requests answered `unavailable`.
   */
  forget(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    this.#o.decisions.take(sessionId);
    this.#o.timers.cancelSession(sessionId);
    this.#o.writerKeys.delete(sessionId);
    if (session === undefined) return;
    this.#sessions.delete(sessionId);
    const moved = new ProtocolError('unavailable', `session ${sessionId} moved to another daemon; open it again`, { reason: 'moved' });
    failAllWaiting(session, moved);
    const writerId = session.summary.writerId;
    const pool = this.#o.pool;
    void (async () => {
      if (writerId !== null) await pool.call(sessionId, 'writer.cancel', { writerId, reason: 'session moved to another daemon' }).catch(() => {});
      await pool.call(sessionId, 'session.unload', { sessionId }).catch(() => {});
      pool.release(sessionId);
    })();
  }

  /**
   * A worker thread died with these sessions' actors: each leaves memory without writing anything (what it logged is
   * durable, its queued decisions stay queued), its waiting requests are answered with the pool's `unavailable`, and
   * it loads again from the log on its next request. One whose writer ran there is loaded again at once, so the
   * writer settles as an `internal` failure naming the worker's exit and the session can write again. One the pool
   * convicted of killing its threads is quarantined instead: its requests get `quarantined` from now on.
   */
  hostExited(exit: HostExit): void {
    const why = exit.error.cause instanceof Error ? exit.error.cause.message : exit.error.message;
    for (const [sessionId, error] of exit.quarantined) this.#quarantined.set(sessionId, error);
    for (const sessionId of exit.sessions) {
      const session = this.#sessions.get(sessionId);
      if (session === undefined) continue;
      this.#sessions.delete(sessionId);
      const quarantined = exit.quarantined.get(sessionId);
      if (quarantined !== undefined) {
        failAllWaiting(session, quarantined);
        this.#o.pool.release(sessionId);
        continue;
      }
      failAllWaiting(session, exit.error);
      this.#lostActors.set(sessionId, `worker thread (actor host ${exit.host}) exited: ${why}`);
      if (session.summary.writerId !== null || session.summary.rebuilding) {
        this.#o.queue.run(sessionId, () => this.load(sessionId)).catch((err: unknown) => this.#o.logError?.('session reload after a worker exit failed', { sessionId, error: String(err) }));
      }
    }
  }
}
