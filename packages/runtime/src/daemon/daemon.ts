import { resolveFitOptions } from '../rebuild/fit-costs.ts';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { resolveBudgets, resolveRebuildCaps } from '@baton/memory-store';
import {
  AppendReplySchema,
  AppendRequestSchema,
  PartRequestSchema,
  PartReplySchema,
  CheckpointReplySchema,
  CheckpointRequestSchema,
  CloseReplySchema,
  HandoffReplySchema,
  HandoffRequestSchema,
  CloseRequestSchema,
  isScopableProject,
  projectOfSubject,
  ProtocolError,
  RebuildReplySchema,
  RebuildRequestSchema,
  RuntimeDrainReplySchema,
  RuntimeDrainRequestSchema,
  RuntimeSessionsReplySchema,
  RuntimeSessionsRequestSchema,
  RuntimeStatusReplySchema,
  RuntimeStatusRequestSchema,
  StatusReplySchema,
  StatusRequestSchema,
  TasksReplySchema,
  TasksRequestSchema,
  contentTypeHeaders,
  encodeReply,
  parseRequest,
  subjects,
  type Encoding,
  type PublishedEventBody,
  type RuntimeSessionsReply,
  type RuntimeSessionsRequest,
  type RuntimeStatusReply,
  type Subjects,
} from '@baton/protocol';
import type { z } from 'zod';
import { HostPool } from '../host/host-pool.ts';
import { StorageRetry } from './storage-retry.ts';
import type { Worker } from 'node:worker_threads';
import { assertNever } from '../assert-never.ts';
import { systemClock, type Clock, type TimerHandle } from '../time/clock.ts';
import type { DaemonLogger, DaemonOptions } from './daemon-options.ts';
import { ClusterRouter } from './cluster-router.ts';
import { isDraining, startupOf, withStartup, type DaemonState, type DrainReport } from './daemon-state.ts';
import { LocalRouter } from './local-router.ts';
import { PrefixInUseError } from './prefix-in-use.ts';
import { repairDataDir } from './repair-data-dir.ts';
import { RequestDispatch, requireSessionId, type ReplyBody } from './request-dispatch.ts';
import type { NotServing, Router } from './router.ts';
import { runtimeStatusOf } from './runtime-status.ts';
import { listSessions } from './session-list.ts';
import { AppendUploads } from './append-uploads.ts';
import { SessionService } from './session-service.ts';
import { resolveWaits, type Waits } from './waits.ts';

export type { DaemonLogger, DaemonOptions, ModelEndpoint } from './daemon-options.ts';
export type { DrainReport } from './daemon-state.ts';

export { errorReplyOf } from './answer-request.ts';

/**
 * The Baton daemon: serves protocol v1 on a transport, hosts session and writer actors in a Piscina pool, and logs
 * every input to the event log before any actor sees it.
 */
export class BatonDaemon {
  readonly id: string;
  readonly subjects: Subjects;
  readonly waits: Waits;
  readonly #o: DaemonOptions;
  readonly #pool: HostPool;
  readonly #sessions: SessionService;
  /** Append requests arriving in parts (too large for one message). */
  readonly #uploads = new AppendUploads();
  /** The request subjects and the session verbs' handlers. */
  readonly #requests: RequestDispatch;
  /** Where sessions are served: this daemon alone, or the daemon of a cluster that holds each. */
  readonly #router: Router;
  readonly #startedAt: number;
  readonly #clock: Clock;
  readonly #logger: DaemonLogger;
  readonly #ready: Promise<void>;
  readonly #newId: () => string;
  /** Aborted by `drain` (and so `stop`): ends a start-up still waiting (to join the cluster) at once. */
  readonly #startup = new AbortController();
  /** Where the daemon is in its lifecycle (`DaemonState`). */
  #state: DaemonState = { kind: 'starting' };
  #fail: (error: ProtocolError) => void = () => {};
  readonly #failed = new Promise<ProtocolError>((resolve) => (this.#fail = resolve));
  readonly #storageRetry: StorageRetry;

  private constructor(options: DaemonOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? (() => {});
    this.id = `baton-${randomUUID().slice(0, 8)}`;
    this.subjects = subjects(options.prefix);
    this.#startedAt = this.#clock.now();
    const memoryRoot = join(options.dataDir, 'memory');
    // Validated once here: a bad configuration fails start-up with the offending key named.
    const budgets = resolveBudgets(options.budgets ?? {});
    const rebuildCaps = resolveRebuildCaps(options.rebuildCaps ?? {});
    const fit = resolveFitOptions(options.fit ?? {});
    this.waits = resolveWaits(options.waits ?? {});
    this.#newId = options.newId ?? (() => randomUUID());
    this.#storageRetry = new StorageRetry(this.#clock);
    this.#requests = new RequestDispatch(options.transport, () => ({
      maxRequestBytes: this.#o.maxRequestBytes ?? this.#o.transport.maxPayload,
      subjects: this.subjects,
      draining: () => isDraining(this.#state),
      ready: () => this.#readyForRequests(),
      notReady: () => this.#notReadyError(),
      logger: this.#logger,
      ...(this.#o.observer !== undefined ? { observer: this.#o.observer } : {}),
    }));
    // The one place that asks whether this daemon runs in cluster mode.
    const routed = {
      log: options.log,
      transport: options.transport,
      subjects: this.subjects,
      unscoped: options.requireScopedSubjects !== true,
      sessions: () => this.#sessions,
      logger: this.#logger,
    };
    this.#router =
      options.cluster === undefined
        ? new LocalRouter(routed)
        : new ClusterRouter({ ...routed, cluster: options.cluster, daemonId: this.id, dataDir: options.dataDir, clock: this.#clock, newId: this.#newId, requests: this.#requests });
    const appendLog = this.#router.appendLog;
    const recovered = repairDataDir(options.dataDir, memoryRoot, options.log, this.#logger);
    // Ready also means subscribed: the flush (a round trip to the server, after `start` subscribed) makes sure the
    // server has every subscription, so a client on another connection is answered from the moment `ready` resolves.
    // Without cluster mode, this daemon must be alone on its subjects: the router asks before `start` subscribes
    // anything; in cluster mode it joins the cluster.
    this.#ready = Promise.all([recovered, this.#router.start(recovered, this.#startup.signal)]).then(() => options.transport.flush().catch(() => {}));
    this.#ready.catch((err: unknown) => {
      if (err instanceof PrefixInUseError) {
        // Worker threads that cannot start stay the reason it serves nothing.
        if (startupOf(this.#state).kind !== 'failed') this.#state = withStartup(this.#state, { kind: 'refused', cause: err });
        // It serves nothing: its subjects are left to the daemon already there.
        this.#requests.unsubscribeAll();
        this.#logger('error', 'refusing to serve: another daemon serves this prefix', { error: err.message, otherDaemon: err.otherDaemon });
      } else this.#logger('error', 'start-up repair failed', { error: String(err) });
    });
    // A repair that failed counts as done (as for requests, see `#readyWithin`); a stopped start-up, or one that found
    // another daemon on its subjects, serves nothing.
    const started = (err?: unknown): void => {
      if (!this.#startup.signal.aborted && !(err instanceof PrefixInUseError) && this.#state.kind === 'starting') this.#state = { kind: 'serving' };
    };
    this.#ready.then(() => started(), started);
    this.#pool = new HostPool({
      size: options.poolSize ?? 2,
      ...(options.workerResourceLimits !== undefined ? { resourceLimits: options.workerResourceLimits } : {}),
      ...(options.workerExecArgv !== undefined ? { execArgv: options.workerExecArgv } : {}),
      exited: (exit) => this.#sessions.hostExited(exit),
      startFailed: (error) => {
        this.#state = withStartup(this.#state, { kind: 'failed', cause: error });
        this.#fail(error);
      },
      log: appendLog,
      shared: () => this.#router.sharedFiles(),
      host: {
        dataDir: options.dataDir,
        memoryRoot,
        stagingRoot: join(options.dataDir, 'staging'),
        historyDir: join(options.dataDir, 'history'),
        budgets,
        rebuildCaps,
        fit,
        model: {
          baseURL: options.model.baseURL,
          apiKey: options.model.apiKey,
          writerModel: options.model.writerModel ?? null,
          timeoutMs: options.model.timeoutMs ?? 120_000,
          maxRetries: options.model.maxRetries ?? 2,
        },
        anthropic:
          options.anthropic === undefined || options.anthropic === null
            ? null
            : { baseURL: options.anthropic.baseURL, apiKey: options.anthropic.apiKey, timeoutMs: options.anthropic.timeoutMs ?? 120_000, maxRetries: options.anthropic.maxRetries ?? 2 },
        sharedProjectFiles: this.#router.sharesProjectFiles,
      },
      events: {
        publish: ({ sessionId, event }) => this.#sessions.publish(sessionId, event),
        // No request waits for these: one the log refuses for want of storage is tried again until space is back.
        'session.input': ({ sessionId, record }) => {
          this.#storageRetry.run(
            () => this.#sessions.input(sessionId, record),
            (err) => this.#logger('warn', 'session input not logged yet (storage); trying again', { sessionId, type: record.type, error: String(err) }),
            (err) => this.#logger('error', 'session input failed', { sessionId, type: record.type, error: String(err) }),
          );
        },
        'writer.settled': (note) => {
          this.#storageRetry.run(
            () => this.#sessions.writerSettled(note),
            (err) => this.#logger('warn', 'writer settlement not logged yet (storage); trying again', { error: String(err), sessionId: note.sessionId, writerId: note.writerId }),
            (err) => this.#logger('error', 'writer settlement failed', { error: String(err), ...note }),
          );
        },
        log: ({ level, msg, data }) => this.#logger(level, msg, data),
      },
    });
    this.#sessions = new SessionService({
      log: appendLog,
      pool: this.#pool,
      memoryRoot,
      historyDir: join(options.dataDir, 'history'),
      clock: this.#clock,
      newId: this.#newId,
      waits: this.waits,
      holds: this.#router.holds,
      ...(options.residency !== undefined ? { residency: options.residency } : {}),
      ...(options.requestQueue !== undefined ? { queue: options.requestQueue } : {}),
      ...(options.tail !== undefined ? { tail: options.tail } : {}),
      ...(options.checkpointDisabled !== undefined ? { checkpointDisabled: options.checkpointDisabled } : {}),
      ...(options.handoffTtlMs !== undefined ? { handoffTtlMs: options.handoffTtlMs } : {}),
      ...(options.randomBytes !== undefined ? { randomBytes: options.randomBytes } : {}),
      publish: (sessionId, encoding, event) => this.#publish(sessionId, encoding, event),
      logError: (msg, data) => this.#logger('error', msg, data),
      overWindow: (sessionId, count) => {
        this.#logger('warn', "a request of the session did not fit the model's window", { sessionId, count });
        this.#o.observer?.requestsOverWindow?.(sessionId, count);
      },
    });
  }

  /** Starts the pool and subscribes every protocol v1 subject. */
  static start(options: DaemonOptions): BatonDaemon {
    const d = new BatonDaemon(options);
    d.#subscribe();
    return d;
  }

  /**
   * Resolves, with the error every request now gets, when the daemon's worker threads cannot start (a preload that
   * throws, a heap limit too small to start in): it serves nothing from then on, and its owner should stop it and exit
   * non-zero. Never resolves otherwise.
   */
  failed(): Promise<ProtocolError> {
    return this.#failed;
  }

  /**
   * Resolves once start-up repair is done and the NATS server has every subscription of the daemon. Rejects with
   * `PrefixInUseError` when, without cluster mode, another daemon already serves its subjects (nothing is served).
   */
  ready(): Promise<void> {
    return this.#ready;
  }

  #isReady = false;

  /**
   * Whether a request may be served: a start-up that refused, whose worker threads failed, or whose join is failing
   * is not waited for (the request is told why at once); otherwise `#readyWithin` the configured start-up wait.
   */
  #readyForRequests(): Promise<boolean> {
    const startup = startupOf(this.#state);
    if ((this.#router.joinFailing() && startup.kind !== 'serving') || startup.kind === 'refused' || startup.kind === 'failed') return Promise.resolve(false);
    return this.#readyWithin(this.waits.startupMs);
  }

  /** Whether start-up repair finished, waiting for it at most `ms`. A repair that failed counts as done (logged). */
  async #readyWithin(ms: number): Promise<boolean> {
    if (this.#isReady) return true;
    let timer: TimerHandle | null = null;
    const waited = await Promise.race([
      this.#ready.then(
        () => true,
        (err: unknown) => !(err instanceof PrefixInUseError),
      ),
      new Promise<false>((resolve) => {
        timer = this.#clock.setTimeout(() => resolve(false), ms);
      }),
    ]);
    if (timer !== null) this.#clock.clearTimeout(timer);
    if (waited) this.#isReady = true;
    return waited;
  }

  #publish(sessionId: string, encoding: Encoding, event: PublishedEventBody): void {
    const body = { ...event, session_id: sessionId, at: this.#clock.now() };
    this.#logger('debug', 'event', body);
    this.#o.observer?.eventPublished(event);
    const data = encodeReply(body, encoding);
    const headers = contentTypeHeaders(encoding);
    // On the project's own events subject (what a project's credentials may subscribe to) and, unless only scoped
    // subjects are served, on the unscoped one.
    const project = this.#sessions.projectOf(sessionId);
    if (project !== null && isScopableProject(project)) this.#o.transport.publish(this.subjects.project(project).events(sessionId), data, headers);
    if (this.#o.requireScopedSubjects !== true) this.#o.transport.publish(this.subjects.events(sessionId), data, headers);
  }

  #subscribe(): void {
    const s = this.subjects;
    const r = this.#requests;
    // `<prefix>.v1.session.<sid>.<verb>`: the session id is the 4th token counted from the prefix;
    // `<prefix>.v1.p.<project>.session.<sid>.<verb>`: the 6th.
    const sessionIndex = s.prefix.split('.').length + 2;
    const scopedIndex = sessionIndex + 2;
    const verb = <S extends z.ZodType, R extends z.ZodType>(name: string, schema: S, _reply: R, handler: (body: z.output<S>, sessionId: string) => Promise<ReplyBody<R>>): void => {
      r.verbs.set(name, r.dispatch(schema, (body, id) => this.#router.sessionCall(id, () => handler(body, requireSessionId(id))), sessionIndex));
      // On a project's subjects the session must be one of that project's, else it is unknown there.
      r.scopedVerbs.set(name, (msg) => {
        const project = projectOfSubject(msg.subject, s.prefix);
        const scoped = r.dispatch(schema, (body, id) => this.#router.sessionCall(id, async () => {
          this.#sessions.requireProject(requireSessionId(id), project);
          return await handler(body, requireSessionId(id));
        }), scopedIndex);
        scoped(msg);
      });
    };
    verb('append', AppendRequestSchema, AppendReplySchema, (b, id) => this.#sessions.append(id, b.messages));
    verb('part', PartRequestSchema, PartReplySchema, (b, id) => this.#uploads.part(id, b, (messages) => this.#sessions.append(id, messages)));
    verb('tasks', TasksRequestSchema, TasksReplySchema, (b, id) => this.#sessions.tasks(id, b.tasks));
    verb('checkpoint', CheckpointRequestSchema, CheckpointReplySchema, (_b, id) => this.#sessions.checkpoint(id));
    verb('rebuild', RebuildRequestSchema, RebuildReplySchema, (b, id) =>
      this.#sessions.rebuild(id, b.reason, b.wait_ms, b.provider_refused === undefined ? undefined : { tokens: b.provider_refused.tokens ?? null }, b.self_contained === true),
    );
    verb('status', StatusRequestSchema, StatusReplySchema, (_b, id) => this.#sessions.status(id));
    verb('close', CloseRequestSchema, CloseReplySchema, (_b, id) => this.#sessions.close(id));
    verb('handoff', HandoffRequestSchema, HandoffReplySchema, (b, id) => this.#sessions.handoff(id, b));
    // `open` and the verbs: on wildcard subjects through the queue group, or only the sessions this daemon holds.
    this.#router.subscribe(r);
    r.serve(s.runtimeStatus, RuntimeStatusRequestSchema, RuntimeStatusReplySchema, () => Promise.resolve(this.runtimeStatus()));
    // Every daemon lists its own sessions: no queue group.
    r.serve(s.runtimeSessions, RuntimeSessionsRequestSchema, RuntimeSessionsReplySchema, (b) => Promise.resolve(this.runtimeSessions(b)));
    // A project's own sessions, on its subjects.
    r.listen(s.scopedSessionsWildcard, (msg) => {
      const project = projectOfSubject(msg.subject, s.prefix);
      void r.handle(msg, (value) => Promise.resolve(this.runtimeSessions(parseRequest(RuntimeSessionsRequestSchema, value), project ?? '')), null);
    });
    // Every daemon drains itself: no queue group.
    r.serve(s.runtimeDrain, RuntimeDrainRequestSchema, RuntimeDrainReplySchema, async (b) => {
      const report = await this.drain(b.timeout_ms ?? this.waits.drainMs);
      return { drained: report.drained, timed_out: report.timedOut, dropped: report.dropped };
    });
  }

  /** The pool's worker threads now (a dead one is replaced): for diagnostics and fault tests. */
  get workerThreads(): readonly Worker[] {
    return this.#pool.threads;
  }

  /** `runtime.status` (what it holds: `runtimeStatusOf`). */
  runtimeStatus(): Omit<RuntimeStatusReply, 'ok'> {
    const serving = startupOf(this.#state).kind === 'serving';
    return runtimeStatusOf({
      serving,
      notServing: serving ? null : this.#notServing(),
      daemonId: this.id,
      uptimeMs: this.#clock.now() - this.#startedAt,
      log: this.#o.log,
      dataDir: this.#o.dataDir,
      sessions: this.#sessions,
      pool: this.#pool,
      cluster: this.#router.clusterStatus(),
    });
  }

  /** What a request gets before start-up finished: `unavailable`, with why (reason `not_joined` in cluster mode). */
  #notReadyError(): ProtocolError {
    const startup = startupOf(this.#state);
    switch (startup.kind) {
      case 'failed':
        return startup.cause;
      case 'refused':
        return new ProtocolError('unavailable', `this daemon refused to serve: ${startup.cause.message}`, { reason: 'prefix_in_use' });
      case 'starting':
      case 'serving': {
        const n = this.#notServing();
        if (n.reason === 'repairing') return new ProtocolError('unavailable', `the daemon is still repairing its data directory after ${this.waits.startupMs} ms; retry`);
        return new ProtocolError('unavailable', `this daemon has not joined the cluster: ${n.message}; retry`, { reason: 'not_joined', cause: n.reason });
      }
      default:
        return assertNever(startup, 'start-up state');
    }
  }

  /** Why the daemon does not serve yet: repairing its data directory, joining, or the last join attempt's cause. */
  #notServing(): NotServing {
    const startup = startupOf(this.#state);
    if (startup.kind === 'failed') return { reason: 'workers_failed', message: startup.cause.message };
    return this.#router.notServing() ?? { reason: 'repairing', message: 'finishing the start-up repair of the data directory' };
  }

  /**
   * `runtime.sessions`: one page of the sessions in this daemon's log, ascending by id: resident ones with their live
   * summary, the others with the state their newest decision recorded (read from the end of their stream).
   */
  runtimeSessions(req: RuntimeSessionsRequest = {}, projectId?: string): Omit<RuntimeSessionsReply, 'ok'> {
    const live = { resident: this.#sessions.residentSummaries(), quarantined: this.#sessions.quarantinedSessions(), recordingStalled: this.#sessions.recordingStalled() };
    return { daemon_id: this.id, ...listSessions(this.#o.log, live, req, projectId) };
  }

  /**
   * Stops accepting work (requests other than `runtime.status` / `runtime.sessions` / `runtime.drain` get
   * `unavailable`), drops queued writer requests (logged as `drain.requested` in each session) and waits up to
   * `timeoutMs` (default: the configured drain wait, 120 s) for the running writers, which are not cancelled. Later
   * calls return the first drain's report. In cluster mode the daemon then hands its sessions off: it stops taking
   * `open`, writes what it queued and leaves the cluster, so other daemons take its sessions over at once.
   */
  drain(timeoutMs: number = this.waits.drainMs): Promise<DrainReport> {
    // A start-up still waiting to join ends here: there is nothing to hand off.
    this.#startup.abort();
    // Cluster mode: new sessions go to the other daemons from now on.
    this.#router.stopOpens();
    const state = this.#state;
    switch (state.kind) {
      case 'draining':
      case 'stopping':
      case 'stopped':
        return state.drained;
      case 'starting':
      case 'serving':
      case 'refused':
      case 'failed': {
        const drained = this.#drain(timeoutMs);
        this.#state = { kind: 'draining', startup: state, drained };
        return drained;
      }
      default:
        return assertNever(state, 'daemon state');
    }
  }

  async #drain(timeoutMs: number): Promise<DrainReport> {
    const running = this.#sessions.runningWriters().length;
    const dropped = await this.#sessions.drainSessions();
    await this.#sessions.waitWritersIdle(timeoutMs);
    const timedOut = this.#sessions.runningWriters().length;
    this.#logger('info', 'drained', { drained: running - timedOut, timedOut, dropped });
    await this.#router.handOff(this.#sessions);
    return { drained: running - timedOut, timedOut, dropped };
  }

  /**
   * Drains (waiting up to `drainTimeoutMs`, default 0), cancels the writers still running, waits for their
   * settlements to be logged (up to the configured `stopSettleMs`), unsubscribes and closes the pool. Safe to call
   * twice.
   */
  async stop(options: { drainTimeoutMs?: number } = {}): Promise<DrainReport> {
    const state = this.#state;
    switch (state.kind) {
      case 'stopping':
      case 'stopped':
        return await state.stopped;
      case 'starting':
      case 'serving':
      case 'refused':
      case 'failed':
      case 'draining': {
        const drained = this.drain(options.drainTimeoutMs ?? 0);
        const stopped = this.#stop(drained);
        this.#state = { kind: 'stopping', startup: startupOf(this.#state), drained, stopped };
        return await stopped;
      }
      default:
        return assertNever(state, 'daemon state');
    }
  }

  async #stop(drained: Promise<DrainReport>): Promise<DrainReport> {
    const report = await drained;
    await Promise.all(
      this.#sessions.runningWriters().map((w) => this.#pool.call(w.sessionId, 'writer.cancel', { writerId: w.writerId, reason: 'daemon stopping' }).catch(() => {})),
    );
    // Cancelled writers settle promptly; their settlements are logged before the pool goes away.
    await this.#sessions.waitWritersIdle(this.waits.stopSettleMs);
    this.#requests.unsubscribeAll();
    await this.#router.stop();
    this.#sessions.clearTimers();
    await this.#sessions.idle();
    await this.#sessions.flushDecisions();
    this.#storageRetry.stop();
    await this.#pool.close();
    const state = this.#state;
    if (state.kind === 'stopping') this.#state = { ...state, kind: 'stopped' };
    return report;
  }

  /** The session service, for in-process callers (waits, tests). */
  get sessions(): SessionService {
    return this.#sessions;
  }
}
