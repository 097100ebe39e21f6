import { statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HistoryStore } from '@baton/memory-store';
import { OWNER_KEY, sessionLog, sessionStream, type SessionInputRecord, type SessionRecordSchemas, type StreamLog } from '@baton/log-schema';
import {
  ProtocolError,
  type AppendReply,
  type CheckpointReply,
  type Encoding,
  type MemoryPaths,
  type Message,
  type OpenReply,
  type OpenRequest,
  type PublishedEventBody,
  type RebuildReason,
  type RebuildReply,
  type StatusReply,
  type TaskItem,
  type TasksReply,
} from '@baton/protocol';
import type { HandoffReply, HandoffRequest, Inherited, Lineage } from '@baton/protocol';
import type { SessionSummary, WriterSettledNote } from '../host/worker-messages.ts';
import type { HostExit } from '../host/host-pool.ts';
import { CommitVersions } from './commit-versions.ts';
import type { LoadedSession } from './loaded-session.ts';
import { DEFAULT_RESIDENCY } from './resident-sessions.ts';
import { statusReplyOf } from './status-reply.ts';
import { bindingOwner, sessionOwner } from './session-owner.ts';
import { DecisionQueue } from './decision-queue.ts';
import { EffectTimers } from './effect-timers.ts';
import { FoldSignal } from './fold-signal.ts';
import { newMessages } from './new-messages.ts';
import { checkMessageForms } from './check-message-forms.ts';
import { unknownSession } from './session-actor-load.ts';
import { SessionCommits } from './session-commits.ts';
import { loggedProjectOf } from './session-list.ts';
import { lastWatermark, openLineage, type LineageFiles, type LineageSource } from './session-lineage.ts';
import { EventLogCommitJournal } from '../memory/event-log-commit-journal.ts';
import { SessionRegistry } from './session-registry.ts';
import { DEFAULT_QUEUED_PER_SESSION, DEFAULT_QUEUED_REQUESTS, SessionQueue } from './session-queue.ts';
import { sessionSetupFor } from './session-setup.ts';
import type { SessionServiceOptions, WaitOutcome } from './session-service-options.ts';
import { answered, memoryPathsOf } from './reply-parts.ts';
import { stateOf } from './state-of.ts';
import { WriterKeys } from './writer-keys.ts';
import { SessionHandoffs, lineageOf } from './session-handoffs.ts';
import { openWithHandoff } from './handoff-open.ts';
import { runningWritersOf, writerCountsOf } from './writer-counts.ts';
import { cachePerfEvent, settlementOf, writerSettledInput } from './writer-settlement.ts';

/** A reply body: the reply schema's type without `ok`, which the daemon adds. */
type Body<T> = Omit<T, 'ok'>;

export { DEFAULT_RESIDENCY, type Residency } from './resident-sessions.ts';

export type { SessionServiceOptions, WaitOutcome } from './session-service-options.ts';

/**
 * The sessions of one daemon on the main thread: logs every input before handing it to the session's actor in its
 * worker, runs the effects that belong on the main thread (publish, reply, timers), answers protocol requests, and
 * keeps only the sessions in use in memory (a session that left loads again from its newest snapshot). A session
 * whose log cannot be folded is quarantined: its requests get `quarantined`, every other session keeps serving.
 * Transport-independent.
 */
export class SessionService {
  readonly #o: SessionServiceOptions;
  readonly #log: StreamLog<SessionRecordSchemas>;
  /** The sessions in memory, and those set aside. */
  readonly #sessions: SessionRegistry;
  readonly #queue: SessionQueue<LoadedSession>;
  readonly #folded: FoldSignal;
  readonly #timers: EffectTimers;
  readonly #decisions: DecisionQueue;
  readonly #versions: CommitVersions;
  /** Commit, then fold: every input of a session goes through it. */
  readonly #commits: SessionCommits;
  readonly #writerKeys: WriterKeys;
  /** What a session that continues another starts from: the memory files and the sessions they belong to. */
  readonly #lineage: { readonly files: LineageFiles; readonly source: LineageSource };
  readonly #handoffs: SessionHandoffs;

  constructor(options: SessionServiceOptions) {
    this.#o = options;
    this.#lineage = {
      files: { memoryRoot: options.memoryRoot, history: new HistoryStore(options.historyDir ?? join(dirname(options.memoryRoot), 'history')), journal: new EventLogCommitJournal(options.log) },
      source: { log: options.log, projectOf: (sessionId) => this.projectOf(sessionId), watermarkOf: (sessionId) => lastWatermark(options.log, sessionId, this.#sessions.get(sessionId)?.summary) },
    };
    this.#log = sessionLog(options.log);
    const residency = { ...DEFAULT_RESIDENCY, ...options.residency };
    this.#queue = new SessionQueue(options.clock, {
      perSession: options.queue?.perSession ?? DEFAULT_QUEUED_PER_SESSION,
      total: options.queue?.total ?? DEFAULT_QUEUED_REQUESTS,
      waitMs: options.waits.queueMs,
    });
    this.#folded = new FoldSignal(options.clock);
    this.#timers = new EffectTimers(options.clock, (sessionId, timerId) => {
      this.input(sessionId, { type: 'timer.fired', payload: { timerId } }).catch(() => {});
    });
    this.#decisions = new DecisionQueue(options.clock, options.waits.decisionFlushMs, (sessionId, records) => this.#log.append(sessionId, records));
    this.#versions = new CommitVersions(options.log);
    this.#commits = new SessionCommits({
      log: this.#log,
      pool: options.pool,
      clock: options.clock,
      decisions: this.#decisions,
      folded: this.#folded,
      effects: { publish: (sessionId, encoding, event) => options.publish(sessionId, encoding, event), timers: this.#timers },
      snapshotEvery: residency.snapshotEvery,
      foldFailed: (sessionId, err) => this.#sessions.quarantineOn(sessionId, err),
      overWindow: (sessionId, count) => options.overWindow?.(sessionId, count),
    });
    this.#writerKeys = new WriterKeys(
      (sessionId, key) => void options.pool.call(sessionId, 'session.writerKey', { sessionId, key }).catch(() => {}),
      (sessionId) => this.#sessions.get(sessionId) !== undefined,
    );
    this.#sessions = new SessionRegistry({
      sessions: this.#log,
      log: options.log,
      pool: options.pool,
      clock: options.clock,
      residency,
      holds: options.holds,
      queue: this.#queue,
      timers: this.#timers,
      decisions: this.#decisions,
      commits: this.#commits,
      writerKeys: this.#writerKeys,
      logError: (msg, data) => options.logError?.(msg, data),
    });
    this.#handoffs = new SessionHandoffs(options, this.#log, this.#versions, {
      inSession: (sessionId, work) => this.#queue.request(sessionId, async () => await work(await this.#sessions.load(sessionId))),
      inMailbox: (sessionId, work) => this.#queue.run(sessionId, work),
      waitForWriter: (sessionId, timeoutMs) => this.waitForWriterSettlement(sessionId, timeoutMs),
      projectOf: (sessionId) => this.projectOf(sessionId),
    });
  }

  /** Sessions in memory now. */
  get loadedCount(): number {
    return this.#sessions.size;
  }

  /** The summaries of the sessions in memory now, by session id (as their actors last reported them). */
  residentSummaries(): Map<string, SessionSummary> {
    return this.#sessions.summaries();
  }

  /** Sessions set aside because their log cannot be folded, with the error their requests get. */
  quarantinedSessions(): Map<string, ProtocolError> {
    return this.#sessions.quarantinedSessions();
  }

  writerCounts(): { running: number; queued: number } {
    return writerCountsOf(this.#sessions.values());
  }

  #paths(projectId: string, sessionId: string): MemoryPaths {
    return memoryPathsOf(this.#o.memoryRoot, projectId, sessionId);
  }

  /** Sessions an embedded gateway reported stalled (`setRecordingStalled`), for `runtime.sessions`. */
  readonly #recordingStalled = new Set<string>();

  /**
   * An embedded gateway could not record its latest calls into `sessionId` (`stalled`), or recorded them since: shown
   * by `runtime.sessions` (`recording: stalled`). Held in memory only.
   */
  setRecordingStalled(sessionId: string, stalled: boolean): void {
    if (stalled) this.#recordingStalled.add(sessionId);
    else this.#recordingStalled.delete(sessionId);
  }

  recordingStalled(): ReadonlySet<string> {
    return this.#recordingStalled;
  }

  /**
   * The key `sessionId`'s writers call the model with from now on (an embedded gateway hands over its agent's): held
   * in memory only, never logged; the session's worker gets it while the session is loaded. Null: the daemon's own.
   */
  setWriterKey(sessionId: string, key: string | null): void {
    this.#writerKeys.set(sessionId, key);
  }

  /**
   * The project a session belongs to: from memory when resident, else from its `session.opened` record (null: no such
   * session).
   */
  projectOf(sessionId: string): string | null {
    return this.#sessions.get(sessionId)?.projectId ?? loggedProjectOf(this.#o.log, sessionId);
  }

  /**
   * Throws the `not_found` of an unknown session unless the session belongs to `projectId`: a request on a project's
   * subjects learns nothing of another project's sessions, not even that they exist.
   */
  requireProject(sessionId: string, projectId: string | null): void {
    if (projectId === null || this.projectOf(sessionId) !== projectId) throw unknownSession(sessionId);
  }

  /**
   * Opens or resumes a session; `assignedId` is the id a new session gets when the request names none (default: a new
   * id). `scope`: the request came on that project's subjects, so a session of another project is unknown to it.
   */
  async open(req: OpenRequest, encoding: Encoding, assignedId?: string, scope?: string): Promise<Body<OpenReply>> {
    if (req.handoff !== undefined) {
      return await openWithHandoff(this.#handoffs, { ...req, handoff: req.handoff }, encoding, scope, {
        resume: (r, enc, sc) => this.open(r, enc, undefined, sc),
        create: (sessionId, r, enc, extra) => this.#queue.request(sessionId, async () => (this.#log.lastSeq(sessionId) > 0 ? null : await this.#create(sessionId, r, enc, extra))),
      });
    }
    const requested = req.session_id;
    const sessionId = requested ?? assignedId ?? this.#o.newId();
    if (scope !== undefined && req.project_id !== scope) throw new ProtocolError('bad_request', `open on the subjects of project ${scope} names project ${req.project_id}`);
    return await this.#queue.request(sessionId, async () => {
      if (requested !== undefined && this.#log.lastSeq(sessionId) > 0) {
        if (scope !== undefined) this.requireProject(sessionId, scope);
        const session = await this.#sessions.load(sessionId);
        if (session.summary.closing) throw new ProtocolError('conflict', `session ${sessionId} is closing; open it again once it is closed`);
        if (session.projectId !== req.project_id) {
          throw new ProtocolError('conflict', `session ${sessionId} belongs to project ${session.projectId}, not ${req.project_id}`);
        }
        if (req.owner !== undefined) await this.#claim(session, req.owner);
        await this.#commits.consume(session, { type: 'session.resumed', payload: {} });
        return { session_id: sessionId, resumed: true, memory: this.#paths(session.projectId, sessionId), thresholds: [...session.thresholds], usable_window: session.summary.usableWindow };
      }
      return await this.#create(sessionId, req, encoding);
    });
  }

  /**
   * Opens a new session (in its mailbox) with a lineage if any: a handoff's (with its inherited context), or a slice's,
   * whose checkpoint is committed before the session opens (a crash in between: a retried open commits it again).
   */
  async #create(sessionId: string, req: OpenRequest, encoding: Encoding, handoff?: { lineage: Lineage; inherited: Inherited }): Promise<Body<OpenReply>> {
    const asked = sessionSetupFor(req, sessionId, {
      ...(this.#o.checkpointDisabled !== undefined ? { checkpointDisabled: this.#o.checkpointDisabled } : {}),
      ...(this.#o.tail !== undefined ? { tail: this.#o.tail } : {}),
    });
    const lineage =
      handoff?.lineage ??
      (req.lineage === undefined
        ? undefined
        : await openLineage(this.#lineage.files, this.#lineage.source, { lineage: req.lineage, sessionId, projectId: req.project_id, owner: req.owner ?? null, at: this.#o.clock.now() }));
    const inherits = handoff === undefined && lineage !== undefined && lineage.checkpoint_version !== null;
    const setup = { ...(inherits ? { ...asked, input: { ...asked.input, inheritedCheckpoint: true } } : asked), ...(handoff !== undefined ? { inherited: handoff.inherited.context } : {}) };
    const payload = { setup, encoding, request: req, ...(lineage !== undefined ? { lineage } : {}) };
    await this.#log.append(sessionId, [{ type: 'session.opened', at: this.#o.clock.now(), payload, msgId: 'session.opened', ...(req.owner !== undefined ? { keys: [OWNER_KEY] } : {}) }]);
    await this.#sessions.load(sessionId);
    const opened = { session_id: sessionId, resumed: false, memory: this.#paths(req.project_id, sessionId), thresholds: setup.input.thresholds, usable_window: setup.input.usableWindow };
    return handoff === undefined ? opened : { ...opened, inherited: handoff.inherited, lineage: handoff.lineage };
  }

  /** Grants a one-time handoff token on the session (`SessionHandoffs.grant`). */
  handoff = (sessionId: string, req: HandoffRequest): Promise<Body<HandoffReply>> => this.#handoffs.grant(sessionId, req);

  /**
   * An open that names an owner: the session's own owner goes on; a session without one, or one that recorded nothing
   * yet (its first call failed upstream, e.g. a mistyped key), is bound to it; any other is refused (`forbidden`),
   * whatever name the session is reached by.
   */
  async #claim(session: LoadedSession, owner: string): Promise<void> {
    if (sessionOwner(this.#log.log, session.sessionId) === owner) return;
    // A handoff's session holds its inherited context from its opening: it is its claimant's from the start.
    if (bindingOwner(this.#log.log, session.sessionId) !== null || lineageOf(this.#log.log, session.sessionId)?.kind === 'handoff') throw new ProtocolError('forbidden', `session ${session.sessionId} belongs to another credential`);
    await this.#log.append(session.sessionId, [{ type: 'session.bound', at: this.#o.clock.now(), payload: { owner }, keys: [OWNER_KEY] }]);
  }

  #requireOpen(session: LoadedSession): void {
    if (session.summary.closed) throw new ProtocolError('conflict', `session ${session.sessionId} is closed; open it again to resume`);
  }

  async append(sessionId: string, messages: readonly Message[]): Promise<Body<AppendReply>> {
    return await this.#queue.runAppend(sessionId, async (logged) => {
      const session = this.#sessions.resident(sessionId) ?? (await this.#sessions.load(sessionId));
      this.#requireOpen(session);
      checkMessageForms(messages, session.api);
      const { accepted, keys } = newMessages(messages, this.#o.log, sessionStream(sessionId));
      if (accepted.length > 0) {
        const appending = this.#commits.append(sessionId, { type: 'messages.appended', payload: { messages: accepted } }, keys);
        logged(session);
        await this.#commits.fold(session, await appending);
      }
      return { accepted: accepted.length, duplicates: messages.length - accepted.length, state: stateOf(session.summary) };
    });
  }

  async tasks(sessionId: string, tasks: readonly TaskItem[]): Promise<Body<TasksReply>> {
    return await this.#queue.request(sessionId, async () => {
      const session = await this.#sessions.load(sessionId);
      this.#requireOpen(session);
      await this.#commits.consume(session, { type: 'tasks.replaced', payload: { tasks: [...tasks] } });
      return { count: tasks.length };
    });
  }

  /**
   * Runs a request whose answer is a `reply` effect, possibly of a later event (close waits for the writer). The
   * mailbox is released once the request is folded: the answer may need later inputs.
   */
  async #requestWithReply(sessionId: string, input: (requestId: string) => SessionInputRecord, check?: (session: LoadedSession) => void): Promise<Record<string, unknown>> {
    const answer = await this.#queue.request(sessionId, async () => {
      const session = await this.#sessions.load(sessionId);
      this.#requireOpen(session);
      check?.(session);
      const requestId = this.#o.newId();
      const replied = new Promise<Record<string, unknown> | ProtocolError>((resolve) => session.replies.set(requestId, resolve));
      await this.#commits.consume(session, input(requestId));
      // Wrapped: returning the promise itself would make the mailbox wait for the answer.
      return { replied };
    });
    return answered(await answer.replied);
  }

  async checkpoint(sessionId: string): Promise<Body<CheckpointReply>> {
    return (await this.#requestWithReply(sessionId, (requestId) => ({ type: 'checkpoint.requested', payload: { requestId } }))) as Body<CheckpointReply>;
  }

  /** Closes the session (its running writer is awaited first, then cancelled); a closed session leaves memory. */
  async close(sessionId: string): Promise<Record<string, never>> {
    await this.#requestWithReply(
      sessionId,
      (requestId) => ({ type: 'close.requested', payload: { requestId, waitMs: this.#o.waits.closeMs } }),
      (s) => {
        if (s.summary.closing) throw new ProtocolError('conflict', `session ${sessionId} is already closing`);
      },
    );
    this.#writerKeys.delete(sessionId);
    void this.#sessions.evict(sessionId);
    return {};
  }

  async status(sessionId: string): Promise<Body<StatusReply>> {
    // Both in the mailbox: the session may not leave memory between its load and the worker's answer.
    const { session, info } = await this.#queue.request(sessionId, async () => {
      const loaded = await this.#sessions.load(sessionId);
      return { session: loaded, info: await this.#o.pool.call(sessionId, 'session.status', { sessionId }) };
    });
    return { ...statusReplyOf(session, info, this.#paths(session.projectId, sessionId), this.#versions), owner: bindingOwner(this.#log.log, sessionId) };
  }

  /** A result computed outside the session's mailbox (a timer, a rebuild render or compaction) enters it as an input. */
  input(sessionId: string, input: SessionInputRecord): Promise<void> {
    return this.#queue.run(sessionId, async () => {
      const session = await this.#sessions.load(sessionId);
      await this.#commits.consume(session, input);
    });
  }

  /** An event a worker publishes for a session (a writer's re-entry), in the session's encoding. */
  publish(sessionId: string, event: PublishedEventBody): void {
    const session = this.#sessions.get(sessionId);
    if (session !== undefined) this.#o.publish(sessionId, session.encoding, event);
  }

  /**
   * Rebuild: the answer may come much later (after a writer, a render or a compaction), so the mailbox is
   * released while it is prepared. One rebuild at a time per session.
   */
  async rebuild(
    sessionId: string,
    reason: RebuildReason,
    waitMs: number | undefined,
    providerRefused?: { tokens: number | null },
    selfContained = false,
  ): Promise<Body<RebuildReply>> {
    const waits = this.#o.waits;
    const wait = waitMs ?? (reason === 'manual' ? waits.rebuildManualMs : waits.rebuildOverflowMs);
    const requested = (session: LoadedSession, checkpointExists: boolean) => {
      this.#requireOpen(session);
      if (session.summary.rebuilding) throw new ProtocolError('conflict', `a rebuild of session ${sessionId} is already in progress`);
      const requestId = this.#o.newId();
      const replied = new Promise<Record<string, unknown> | ProtocolError>((resolve) => session.replies.set(requestId, resolve));
      const input: SessionInputRecord = {
        type: 'rebuild.requested',
        payload: { requestId, reason, waitMs: wait, inFlightWaitMs: waits.rebuildInFlightMs, checkpointExists, ...(providerRefused !== undefined ? { providerRefused } : {}), ...(selfContained ? { selfContained } : {}) },
      };
      return { requestId, replied, input };
    };
    // Right behind an append (the gateway's overflowing call) it is logged with the append's records, checked before
    // the append is folded (an append neither closes a session nor starts a rebuild); the file check is synchronous.
    const following = this.#queue.followAppend(sessionId)?.then((session) => {
      if (session === null) return null;
      const request = requested(session, statSync(this.#paths(session.projectId, sessionId).checkpoint, { throwIfNoEntry: false })?.isFile() === true);
      const logged = this.#commits.append(sessionId, request.input);
      // Awaited in the request's turn; a failure before then is not an unhandled one.
      logged.catch(() => {});
      return { session, ...request, logged };
    });
    following?.catch(() => {});
    // One that follows an append is logged with it: its turn may not be refused for the time it waited.
    const answer = await this.#queue.request(sessionId, async () => {
      const early = await following;
      if (early === undefined || early === null) {
        const session = await this.#sessions.load(sessionId);
        const request = requested(session, await stat(this.#paths(session.projectId, sessionId).checkpoint).then((s) => s.isFile(), () => false));
        await this.#commits.consume(session, request.input);
        return { replied: request.replied };
      }
      try {
        const stored = await early.logged;
        // The append before it may have been folded into quarantine, or the session moved to another daemon meanwhile.
        if (this.#sessions.get(sessionId) !== early.session) throw this.#sessions.quarantinedError(sessionId) ?? new ProtocolError('unavailable', `session ${sessionId} moved to another daemon; open it again`, { reason: 'moved' });
        await this.#commits.fold(early.session, stored);
      } catch (err) {
        early.session.replies.delete(early.requestId);
        throw err;
      }
      return { replied: early.replied };
    }, { timed: following === undefined });
    return answered(await answer.replied) as Body<RebuildReply>;
  }

  /** Cancels every pending timer, the idle sweep included (on shutdown). */
  clearTimers(): void {
    this.#timers.clear();
    this.#sessions.stopSweep();
  }

  /** A writer finished in a worker: its cache figures are published and its settlement enters the session as an input. */
  writerSettled(note: WriterSettledNote): Promise<void> {
    return this.#queue.run(note.sessionId, async () => {
      const session = await this.#sessions.load(note.sessionId);
      this.#o.publish(note.sessionId, session.encoding, cachePerfEvent(note));
      const record = await this.#commits.append(note.sessionId, writerSettledInput(note));
      await this.#commits.fold(session, record);
    });
  }

  /**
   * Waits for the writer running in `sessionId` at call time to settle (a later pending writer is not awaited).
   * `timeout` after `timeoutMs` (default: the configured writer settlement wait, 5 min) leaves the writer running;
   * `no-writer` when none runs.
   */
  async waitForWriterSettlement(sessionId: string, timeoutMs = this.#o.waits.writerSettlementMs): Promise<WaitOutcome> {
    const session = await this.#queue.run(sessionId, () => this.#sessions.load(sessionId));
    const writerId = session.summary.writerId;
    if (writerId === null) return { outcome: 'no-writer' };
    // The session as it is now: it may have been loaded again meanwhile (its worker thread died).
    return await this.#folded.waitFor<WaitOutcome>(() => settlementOf((this.#sessions.get(sessionId) ?? session).summary, writerId), timeoutMs, { outcome: 'timeout' });
  }

  /** Writes every queued decision and snapshot record (on drain and shutdown). */
  flushDecisions(): Promise<void> {
    return this.#decisions.flushAll();
  }

  /** Writers running now, by session. */
  runningWriters(): { sessionId: string; writerId: string }[] {
    return runningWritersOf(this.#sessions.values());
  }

  /** Resolves when no writer runs, or after `timeoutMs`; true when none runs. */
  async waitWritersIdle(timeoutMs: number): Promise<boolean> {
    return await this.#folded.waitFor(() => (this.runningWriters().length === 0 ? true : null), timeoutMs, false);
  }

  /**
   * Drains every resident session: queued writer requests are dropped (recorded by the `drain.requested` event) and
   * no new writer starts. Returns how many requests were dropped.
   */
  async drainSessions(): Promise<number> {
    this.#sessions.drain();
    let dropped = 0;
    await Promise.all(
      [...this.#sessions.keys()].map((sessionId) =>
        this.#queue.run(sessionId, async () => {
          // It may have left memory while this waited; a session not in memory has nothing queued to drop.
          const session = this.#sessions.get(sessionId);
          if (session === undefined) return;
          if (session.summary.writer === 'running+pending') dropped++;
          await this.#commits.consume(session, { type: 'drain.requested', payload: {} });
        }),
      ),
    );
    return dropped;
  }

  /** Drops a session from memory without writing anything for it (another daemon took it over): `SessionRegistry.forget`. */
  forget(sessionId: string): void {
    this.#sessions.forget(sessionId);
  }

  /** A worker thread died with these sessions' actors (`SessionRegistry.hostExited`). */
  hostExited(exit: HostExit): void {
    this.#sessions.hostExited(exit);
  }

  /** Requests queued or running now, over all sessions. */
  get queuedRequests(): number {
    return this.#queue.queuedRequests;
  }

  /** Waits for queued session work (used on shutdown). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }
}
