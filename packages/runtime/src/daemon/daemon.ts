import { resolveFitOptions } from '../rebuild/fit-costs.ts';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { InboundMessage, TransportSubscription } from '@baton/client';
import { HistoryStore, recoverCommits, resolveBudgets, resolveRebuildCaps } from '@baton/memory-store';
import {
  AppendReplySchema,
  AppendRequestSchema,
  PartRequestSchema,
  PartReplySchema,
  CheckpointReplySchema,
  CheckpointRequestSchema,
  CloseReplySchema,
  CloseRequestSchema,
  OPEN_QUEUE_GROUP,
  isScopableProject,
  projectOfSubject,
  type SessionVerb,
  OpenReplySchema,
  OpenRequestSchema,
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
import type { JoinedSharedFiles } from '../cluster/join-shared-files.ts';
import { ReplicatedEventLog } from '../cluster/replicated-event-log.ts';
import { HostPool } from '../host/host-pool.ts';
import { StorageRetry } from './storage-retry.ts';
import type { Worker } from 'node:worker_threads';
import { EventLogCommitJournal } from '../memory/event-log-commit-journal.ts';
import { systemClock, type Clock, type TimerHandle } from '../time/clock.ts';
import { clearStagingRoot } from '../writer/staging.ts';
import { ArrivalOrder } from './arrival-order.ts';
import type { DaemonLogger, DaemonOptions } from './daemon-options.ts';
import { resolveClusterOptions, type ResolvedClusterOptions } from './cluster-options.ts';
import { SCOPE_HEADER, type ClusterRouting } from './cluster-routing.ts';
import { joinCluster, leaveJoined, type JoinedCluster } from './join-cluster.ts';
import { joinFailureOf, type JoinFailure } from '../cluster/join-failure.ts';
import { retryJoin } from '../cluster/retry-join.ts';
import { PrefixInUseError, checkPrefixFree } from './prefix-in-use.ts';
import { answerRequest } from './answer-request.ts';
import { runtimeStatusOf } from './runtime-status.ts';
import { listSessions } from './session-list.ts';
import { AppendUploads } from './append-uploads.ts';
import { SessionService } from './session-service.ts';
import { resolveWaits, type Waits } from './waits.ts';

export type { DaemonLogger, DaemonOptions, ModelEndpoint } from './daemon-options.ts';

/** How long a daemon without cluster mode waits for another daemon on its subjects to answer before refusing. */
const PREFIX_CHECK_MS = 2_000;

/** A reply body as a handler returns it: the reply schema's input without `ok`, which the daemon adds. */
type ReplyBody<R extends z.ZodType> = Omit<z.input<R>, 'ok'>;

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
  readonly #subs: TransportSubscription[] = [];
  readonly #startedAt: number;
  readonly #clock: Clock;
  readonly #logger: DaemonLogger;
  readonly #ready: Promise<void>;
  readonly #newId: () => string;
  readonly #clusterOptions: ResolvedClusterOptions | null;
  /** Cluster mode, once joined: which daemon serves which session. */
  #routing: ClusterRouting | null = null;
  /** Cluster mode, once joined: the project memory files every daemon shares. */
  #shared: JoinedSharedFiles | null = null;
  /** Durability `replicated`: the log sessions and writers append to (local, then the session's replicated log). */
  readonly #replicated: ReplicatedEventLog | null;
  /** The session request handlers, by verb. */
  readonly #verbs = new Map<string, (msg: InboundMessage) => void>();
  /** The same verbs on a project's subjects (the session checked against the project). */
  readonly #scopedVerbs = new Map<string, (msg: InboundMessage) => void>();
  /** Cluster mode: the project-scoped subscription of each session held here. */
  readonly #scopedSubs = new Map<string, TransportSubscription>();
  /** Cluster mode: a session's requests reach its queue in arrival order across the ownership guard. */
  readonly #arrival = new ArrivalOrder();
  #openSubs: TransportSubscription[] = [];
  /** Without cluster mode: another daemon already served this daemon's subjects at start-up (`checkPrefixFree`). */
  #refused: PrefixInUseError | null = null;
  /** Aborted by `stop`: ends a start-up still waiting (to join the cluster) at once. */
  readonly #startup = new AbortController();
  /** Whether start-up finished (repair done and, in cluster mode, the cluster joined): the daemon serves sessions. */
  #serving = false;
  /** Set when the worker threads cannot start: the daemon serves nothing (see `failed`). */
  #workersFailed: ProtocolError | null = null;
  #fail: (error: ProtocolError) => void = () => {};
  readonly #failed = new Promise<ProtocolError>((resolve) => (this.#fail = resolve));
  /** Cluster mode, before joining: attempts so far and why the last one failed. */
  #joinAttempts = 0;
  #joinFailure: JoinFailure | null = null;
  #draining = false;
  #drained: Promise<DrainReport> | null = null;
  #stopped: Promise<DrainReport> | null = null;
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
    this.#clusterOptions = options.cluster === undefined ? null : resolveClusterOptions(options.cluster);
    this.#replicated =
      this.#clusterOptions?.durability === 'replicated'
        ? new ReplicatedEventLog({
            local: options.log,
            writerOf: (sessionId) => this.#routing?.membership.writer(sessionId),
            onFenced: (sessionId, err) => void this.#routing?.failure(sessionId, err),
            history: new HistoryStore(join(options.dataDir, 'history')),
          })
        : null;
    const appendLog = this.#replicated ?? options.log;
    const recovered = this.#recover(memoryRoot);
    // Ready also means subscribed: the flush (a round trip to the server, after `start` subscribed) makes sure the
    // server has every subscription, so a client on another connection is answered from the moment `ready` resolves.
    // Without cluster mode, this daemon must be alone on its subjects. The question goes out before `start`
    // subscribes anything (a request is published at once, so this daemon's own subscriptions do not hear it).
    const unknown = (err: unknown): void => this.#logger('warn', 'could not ask whether another daemon serves this prefix', { error: String(err) });
    const alone = this.#clusterOptions === null ? checkPrefixFree(options.transport, this.subjects, PREFIX_CHECK_MS, unknown) : Promise.resolve();
    this.#ready = Promise.all([recovered, this.#joinCluster(recovered), alone]).then(() => options.transport.flush().catch(() => {}));
    this.#ready.catch((err: unknown) => {
      if (err instanceof PrefixInUseError) {
        this.#refused = err;
        // It serves nothing: its subjects are left to the daemon already there.
        for (const sub of this.#subs) sub.unsubscribe();
        this.#logger('error', 'refusing to serve: another daemon serves this prefix', { error: err.message, otherDaemon: err.otherDaemon });
      } else this.#logger('error', 'start-up repair failed', { error: String(err) });
    });
    // A repair that failed counts as done (as for requests, see `#readyWithin`); a stopped start-up, or one that found
    // another daemon on its subjects, serves nothing.
    const started = (err?: unknown): void => {
      if (!this.#startup.signal.aborted && !(err instanceof PrefixInUseError) && this.#workersFailed === null) this.#serving = true;
    };
    this.#ready.then(() => started(), started);
    this.#pool = new HostPool({
      size: options.poolSize ?? 2,
      ...(options.workerResourceLimits !== undefined ? { resourceLimits: options.workerResourceLimits } : {}),
      ...(options.workerExecArgv !== undefined ? { execArgv: options.workerExecArgv } : {}),
      exited: (exit) => this.#sessions.hostExited(exit),
      startFailed: (error) => {
        this.#workersFailed = error;
        this.#serving = false;
        this.#fail(error);
      },
      log: appendLog,
      shared: () => this.#shared?.files ?? null,
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
        sharedProjectFiles: this.#clusterOptions !== null,
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
      clock: this.#clock,
      newId: this.#newId,
      waits: this.waits,
      ...(this.#clusterOptions !== null ? { holds: (sessionId: string) => this.#routing?.membership.holds(sessionId) ?? false } : {}),
      ...(options.residency !== undefined ? { residency: options.residency } : {}),
      ...(options.requestQueue !== undefined ? { queue: options.requestQueue } : {}),
      ...(options.tail !== undefined ? { tail: options.tail } : {}),
      ...(options.checkpointDisabled !== undefined ? { checkpointDisabled: options.checkpointDisabled } : {}),
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
   * Start-up repair: finishes memory commits a crash interrupted (roll forward from the history store)
   * and drops staging trees of writers that died with the previous process.
   */
  async #recover(memoryRoot: string): Promise<void> {
    await clearStagingRoot(join(this.#o.dataDir, 'staging'));
    const recovered = await recoverCommits({
      memoryRoot,
      history: new HistoryStore(join(this.#o.dataDir, 'history')),
      journal: new EventLogCommitJournal(this.#o.log),
    });
    if (recovered.length > 0) this.#logger('warn', 'finished interrupted memory commits', { commits: recovered.map((c) => c.commitId) });
  }

  /**
   * Cluster mode: joins the cluster and claims what no daemon had claimed, before serving anything. A failed attempt
   * (no quorum yet, JetStream disabled, too many replicas, no permission) is logged with its cause, shown in
   * `runtime.status`, and tried again after a doubling delay (up to 5 s) until it succeeds or the daemon stops.
   */
  async #joinCluster(recovered: Promise<void>): Promise<void> {
    const c = this.#clusterOptions;
    if (c === null) return;
    let logged: { readonly message: string; readonly at: number } | null = null;
    const joined = await retryJoin({
      attempt: () => this.#joinOnce(c, recovered),
      classify: (err) => joinFailureOf(err, c.connection.info ?? {}, c.replicas),
      onFailure: (failure, attempts, retryInMs) => {
        this.#joinAttempts = attempts;
        this.#joinFailure = failure;
        // Once per cause, then again every 30 s while it lasts.
        const now = this.#clock.now();
        if (logged !== null && logged.message === failure.message && now - logged.at < 30_000) return;
        logged = { message: failure.message, at: now };
        this.#logger('warn', 'cannot join the cluster yet', { reason: failure.code, cause: failure.message, attempts, retryInMs });
      },
      signal: this.#startup.signal,
      discard: (late) => this.#undoJoin(late),
      delayMs: c.joinRetryMs,
      maxDelayMs: 5_000,
      clock: this.#clock,
    });
    if (joined === null) return;
    this.#joinFailure = null;
    if (this.#joinAttempts > 0) this.#logger('info', 'joined the cluster', { attempts: this.#joinAttempts + 1 });
  }

  /** One attempt to join (`joinCluster`) and adopt this data directory's unclaimed sessions; a failure is undone. */
  async #joinOnce(c: ResolvedClusterOptions, recovered: Promise<void>): Promise<JoinedCluster> {
    const joined = await joinCluster({
      cluster: c,
      daemonId: this.id,
      transport: this.#o.transport,
      subjects: this.subjects,
      log: this.#o.log,
      replicated: this.#replicated,
      dataDir: this.#o.dataDir,
      wallClock: () => this.#clock.now(),
      logger: this.#logger,
      recovered,
      serve: (sessionId) => this.#serveSession(sessionId),
      forget: (sessionId) => this.#sessions.forget(sessionId),
    });
    if (this.#startup.signal.aborted) {
      await leaveJoined(joined);
      throw new Error('the daemon stopped while joining');
    }
    this.#shared = joined.shared;
    this.#routing = joined.routing;
    try {
      const adopted = await joined.routing.adoptUnclaimed();
      if (adopted > 0) this.#logger('info', 'claimed the sessions of this data directory no daemon had claimed', { sessions: adopted });
    } catch (err) {
      await this.#undoJoin(joined);
      throw err;
    }
    return joined;
  }

  /** Leaves a cluster joined by an attempt that failed late, or finished after the daemon was told to stop. */
  async #undoJoin(joined: JoinedCluster): Promise<void> {
    if (this.#routing === joined.routing) {
      this.#routing = null;
      this.#shared = null;
    }
    await leaveJoined(joined);
  }

  /**
   * Resolves once start-up repair is done and the NATS server has every subscription of the daemon. Rejects with
   * `PrefixInUseError` when, without cluster mode, another daemon already serves its subjects (nothing is served).
   */
  /**
   * Resolves, with the error every request now gets, when the daemon's worker threads cannot start (a preload that
   * throws, a heap limit too small to start in): it serves nothing from then on, and its owner should stop it and exit
   * non-zero. Never resolves otherwise.
   */
  failed(): Promise<ProtocolError> {
    return this.#failed;
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  #isReady = false;

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

  #serve<S extends z.ZodType, R extends z.ZodType>(
    subject: string,
    schema: S,
    _reply: R,
    handler: (body: z.output<S>, sessionId: string | null, encoding: Encoding) => Promise<ReplyBody<R>>,
    options: { queue?: string; sessionIndex?: number } = {},
  ): TransportSubscription {
    return this.#listen(subject, this.#dispatch(schema, handler, options.sessionIndex ?? null), options.queue);
  }

  #listen(subject: string, dispatch: (msg: InboundMessage) => void, queue?: string): TransportSubscription {
    const sub = this.#o.transport.subscribe(subject, dispatch, queue !== undefined ? { queue } : {});
    this.#subs.push(sub);
    return sub;
  }

  #dispatch<S extends z.ZodType>(schema: S, handler: (body: z.output<S>, sessionId: string | null, encoding: Encoding) => Promise<object>, sessionIndex: number | null): (msg: InboundMessage) => void {
    return (msg) => {
      void this.#handle(msg, (value, sid, enc) => handler(parseRequest(schema, value), sid, enc), sessionIndex);
    };
  }

  #handle(msg: InboundMessage, handler: (value: unknown, sessionId: string | null, encoding: Encoding) => Promise<object>, sessionIndex: number | null): Promise<void> {
    return answerRequest(msg, handler, sessionIndex, {
      maxRequestBytes: this.#o.maxRequestBytes ?? this.#o.transport.maxPayload,
      subjects: this.subjects,
      draining: () => this.#draining,
      // A join that is failing is not waited for: the request is told why at once.
      ready: () => ((this.#joinFailure !== null && !this.#serving) || this.#refused !== null || this.#workersFailed !== null ? Promise.resolve(false) : this.#readyWithin(this.waits.startupMs)),
      notReady: () => this.#notReadyError(),
      logger: this.#logger,
      ...(this.#o.observer !== undefined ? { observer: this.#o.observer } : {}),
    });
  }

  #subscribe(): void {
    const s = this.subjects;
    const unscoped = this.#o.requireScopedSubjects !== true;
    // `<prefix>.v1.session.<sid>.<verb>`: the session id is the 4th token counted from the prefix;
    // `<prefix>.v1.p.<project>.session.<sid>.<verb>`: the 6th.
    const sessionIndex = s.prefix.split('.').length + 2;
    const scopedIndex = sessionIndex + 2;
    const verb = <S extends z.ZodType, R extends z.ZodType>(name: string, schema: S, _reply: R, handler: (body: z.output<S>, sessionId: string) => Promise<ReplyBody<R>>): void => {
      this.#verbs.set(name, this.#dispatch(schema, (body, id) => this.#sessionCall(id, () => handler(body, sid(id))), sessionIndex));
      // On a project's subjects the session must be one of that project's, else it is unknown there.
      this.#scopedVerbs.set(name, (msg) => {
        const project = projectOfSubject(msg.subject, s.prefix);
        const scoped = this.#dispatch(schema, (body, id) => this.#sessionCall(id, async () => {
          this.#sessions.requireProject(sid(id), project);
          return await handler(body, sid(id));
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
    if (this.#clusterOptions === null) {
      if (unscoped) {
        this.#serve(s.open, OpenRequestSchema, OpenReplySchema, (body, _sid, enc) => this.#sessions.open(body, enc), { queue: OPEN_QUEUE_GROUP });
        for (const [name, dispatch] of this.#verbs) this.#listen(`${s.prefix}.v1.session.*.${name}`, dispatch, OPEN_QUEUE_GROUP);
      }
      this.#listen(s.scopedOpenWildcard, (msg) => {
        const scope = projectOfSubject(msg.subject, s.prefix);
        void this.#handle(msg, (value, _sid, enc) => this.#sessions.open(parseRequest(OpenRequestSchema, value), enc, undefined, scope ?? ''), null);
      }, OPEN_QUEUE_GROUP);
      for (const [name, dispatch] of this.#scopedVerbs) this.#listen(s.scopedVerbWildcard(name as SessionVerb), dispatch, OPEN_QUEUE_GROUP);
    } else {
      // Only the holder of a session subscribes to its subjects (`#serveSession`); `open` finds or makes the holder.
      const clusterOpen = (msg: InboundMessage, scope: string | undefined): void =>
        void this.#handle(msg, (value, _sid, enc) => this.#clusterOpen(parseRequest(OpenRequestSchema, value), enc, msg, scope), null);
      this.#openSubs = [
        ...(unscoped ? [this.#listen(s.open, (msg) => clusterOpen(msg, undefined), OPEN_QUEUE_GROUP)] : []),
        this.#listen(s.scopedOpenWildcard, (msg) => clusterOpen(msg, projectOfSubject(msg.subject, s.prefix) ?? ''), OPEN_QUEUE_GROUP),
      ];
    }
    this.#serve(s.runtimeStatus, RuntimeStatusRequestSchema, RuntimeStatusReplySchema, () => Promise.resolve(this.runtimeStatus()));
    // Every daemon lists its own sessions: no queue group.
    this.#serve(s.runtimeSessions, RuntimeSessionsRequestSchema, RuntimeSessionsReplySchema, (b) => Promise.resolve(this.runtimeSessions(b)));
    // A project's own sessions, on its subjects.
    this.#listen(s.scopedSessionsWildcard, (msg) => {
      const project = projectOfSubject(msg.subject, s.prefix);
      void this.#handle(msg, (value) => Promise.resolve(this.runtimeSessions(parseRequest(RuntimeSessionsRequestSchema, value), project ?? '')), null);
    });
    // Every daemon drains itself: no queue group.
    this.#serve(s.runtimeDrain, RuntimeDrainRequestSchema, RuntimeDrainReplySchema, async (b) => {
      const r = await this.drain(b.timeout_ms ?? this.waits.drainMs);
      return { drained: r.drained, timed_out: r.timedOut, dropped: r.dropped };
    });
  }

  /**
   * A session request: in cluster mode, served only while this daemon holds the session (see `ClusterRouting`), and
   * queued in arrival order whatever the asynchronous guard waits for.
   */
  async #sessionCall<T>(sessionId: string | null, call: () => Promise<T>): Promise<T> {
    const routing = this.#routing;
    if (this.#clusterOptions === null) return await call();
    if (routing === null) throw new ProtocolError('unavailable', 'this daemon has not joined the cluster', { reason: 'not_joined' });
    const id = sid(sessionId);
    return await this.#arrival.run(id, () => routing.guard(id), async () => {
      try {
        return await call();
      } catch (err) {
        throw routing.failure(id, err);
      }
    });
  }

  /**
   * Cluster mode `open` (any daemon, through the queue group): take the session when free, else ask its holder.
   * `scope`: it came on that project's subjects (the holder is told so in a header of the forwarded request).
   */
  async #clusterOpen(req: z.output<typeof OpenRequestSchema>, encoding: Encoding, msg: InboundMessage, scope: string | undefined): Promise<object> {
    const routing = this.#routing;
    if (routing === null) throw new ProtocolError('unavailable', 'this daemon has not joined the cluster', { reason: 'not_joined' });
    if (scope !== undefined && req.project_id !== scope) throw new ProtocolError('bad_request', `open on the subjects of project ${scope} names project ${req.project_id}`);
    // A daemon just back from a pause (or cut off from JetStream) does not take opens until it knows what it still
    // holds: the client's next try reaches another daemon at once.
    if (!(await routing.takesOpens())) throw new ProtocolError('unavailable', "this daemon's lease lapsed (it was paused or cut off): it takes no open until it re-checked its sessions; retry", { reason: 'lease_uncertain' });
    const sessionId = req.session_id ?? this.#newId();
    const forwarded = scope === undefined ? msg : { ...msg, headers: { ...msg.headers, [SCOPE_HEADER]: scope } };
    const taken = await routing.takeOrForward(sessionId, forwarded);
    if (!taken.held) return taken.reply;
    const reply = await this.#sessionCall(sessionId, () => this.#sessions.open(req, encoding, sessionId, scope));
    this.#serveScoped(sessionId, req.project_id);
    return reply;
  }

  /**
   * Subscribes the request subjects of a session this daemon holds (no queue group: it alone serves them): its
   * unscoped ones, and its project's once the project is known (`#serveScoped`). Unsubscribing drops both.
   */
  #serveSession(sessionId: string): TransportSubscription {
    const head = `${this.subjects.prefix}.v1.session.${sessionId}.`;
    const unscoped = this.#o.requireScopedSubjects !== true;
    const opened = async (body: z.output<typeof OpenRequestSchema>, enc: Encoding, scope?: string): Promise<object> => {
      if (body.session_id !== sessionId) throw new ProtocolError('bad_request', `open on the subject of session ${sessionId} names ${String(body.session_id)}`);
      const reply = await this.#sessionCall(sessionId, () => this.#sessions.open(body, enc, undefined, scope));
      this.#serveScoped(sessionId, body.project_id);
      return reply;
    };
    const own = this.#o.transport.subscribe(`${head}*`, (msg) => {
      const name = msg.subject.slice(head.length);
      if (name === 'open') {
        // A forwarded `open` of a project's subjects carries its project in a header (only daemons forward).
        const scope = msg.headers[SCOPE_HEADER];
        if (scope !== undefined || unscoped) this.#dispatch(OpenRequestSchema, (body, _sid, enc) => opened(body, enc, scope), null)(msg);
        return;
      }
      // The session's own events arrive here too; they are not requests.
      if (unscoped) this.#verbs.get(name)?.(msg);
    });
    // A session this daemon takes over has its project in its log; a new one gets it with its `open`.
    this.#serveScoped(sessionId, this.#sessions.projectOf(sessionId));
    return {
      unsubscribe: () => {
        own.unsubscribe();
        this.#scopedSubs.get(sessionId)?.unsubscribe();
        this.#scopedSubs.delete(sessionId);
      },
    };
  }

  /**
   * Subscribes a held session's subjects under its own project only, so that another project's subject naming it
   * finds no responder, exactly as an id no daemon holds. Subscribed before the reply that tells a client of the
   * session leaves (the server takes a connection's subscriptions and messages in order).
   */
  #serveScoped(sessionId: string, projectId: string | null): void {
    if (projectId === null || !isScopableProject(projectId) || this.#scopedSubs.has(sessionId)) return;
    const head = `${this.subjects.prefix}.v1.p.${projectId}.session.${sessionId}.`;
    this.#scopedSubs.set(
      sessionId,
      this.#o.transport.subscribe(`${head}*`, (msg) => {
        // Events and anything that is no verb: not requests.
        this.#scopedVerbs.get(msg.subject.slice(head.length))?.(msg);
      }),
    );
  }

  /** The pool's worker threads now (a dead one is replaced): for diagnostics and fault tests. */
  get workerThreads(): readonly Worker[] {
    return this.#pool.threads;
  }

  /** `runtime.status` (what it holds: `runtimeStatusOf`). */
  runtimeStatus(): Omit<RuntimeStatusReply, 'ok'> {
    return runtimeStatusOf({
      serving: this.#serving,
      notServing: this.#serving ? null : this.#notServing(),
      daemonId: this.id,
      uptimeMs: this.#clock.now() - this.#startedAt,
      log: this.#o.log,
      dataDir: this.#o.dataDir,
      sessions: this.#sessions,
      pool: this.#pool,
      cluster: this.#routing !== null && this.#clusterOptions !== null ? { routing: this.#routing, options: this.#clusterOptions } : null,
    });
  }

  /** What a request gets before start-up finished: `unavailable`, with why (reason `not_joined` in cluster mode). */
  #notReadyError(): ProtocolError {
    if (this.#workersFailed !== null) return this.#workersFailed;
    if (this.#refused !== null) return new ProtocolError('unavailable', `this daemon refused to serve: ${this.#refused.message}`, { reason: 'prefix_in_use' });
    const n = this.#notServing();
    if (n.reason === 'repairing') return new ProtocolError('unavailable', `the daemon is still repairing its data directory after ${this.waits.startupMs} ms; retry`);
    return new ProtocolError('unavailable', `this daemon has not joined the cluster: ${n.message}; retry`, { reason: 'not_joined', cause: n.reason });
  }

  /** Why the daemon does not serve yet: repairing its data directory, joining, or the last join attempt's cause. */
  #notServing(): { reason: string; message: string; attempts?: number } {
    if (this.#workersFailed !== null) return { reason: 'workers_failed', message: this.#workersFailed.message };
    if (this.#clusterOptions !== null && this.#routing === null) {
      const f = this.#joinFailure;
      if (f === null) return { reason: 'joining', message: 'joining the cluster', attempts: this.#joinAttempts };
      return { reason: f.code, message: f.message, attempts: this.#joinAttempts };
    }
    return { reason: 'repairing', message: 'finishing the start-up repair of the data directory' };
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
    this.#draining = true;
    // A start-up still waiting to join ends here: there is nothing to hand off.
    this.#startup.abort();
    // Cluster mode: new sessions go to the other daemons from now on.
    for (const sub of this.#openSubs) sub.unsubscribe();
    this.#drained ??= (async () => {
      const running = this.#sessions.runningWriters().length;
      const dropped = await this.#sessions.drainSessions();
      await this.#sessions.waitWritersIdle(timeoutMs);
      const timedOut = this.#sessions.runningWriters().length;
      this.#logger('info', 'drained', { drained: running - timedOut, timedOut, dropped });
      if (this.#routing !== null) {
        // Everything this daemon had for its sessions is written; then they are handed off.
        await this.#sessions.idle();
        await this.#sessions.flushDecisions();
        await this.#routing.leave();
      }
      return { drained: running - timedOut, timedOut, dropped };
    })();
    return this.#drained;
  }

  /**
   * Drains (waiting up to `drainTimeoutMs`, default 0), cancels the writers still running, waits for their
   * settlements to be logged (up to the configured `stopSettleMs`), unsubscribes and closes the pool. Safe to call
   * twice.
   */
  async stop(options: { drainTimeoutMs?: number } = {}): Promise<DrainReport> {
    this.#stopped ??= (async () => {
      const report = await this.drain(options.drainTimeoutMs ?? 0);
      await Promise.all(
        this.#sessions.runningWriters().map((w) => this.#pool.call(w.sessionId, 'writer.cancel', { writerId: w.writerId, reason: 'daemon stopping' }).catch(() => {})),
      );
      // Cancelled writers settle promptly; their settlements are logged before the pool goes away.
      await this.#sessions.waitWritersIdle(this.waits.stopSettleMs);
      for (const sub of this.#subs) sub.unsubscribe();
      await this.#routing?.stop();
      this.#shared?.follower.stop();
      this.#sessions.clearTimers();
      await this.#sessions.idle();
      await this.#sessions.flushDecisions();
      this.#storageRetry.stop();
      await this.#pool.close();
      return report;
    })();
    return await this.#stopped;
  }

  /** The session service, for in-process callers (waits, tests). */
  get sessions(): SessionService {
    return this.#sessions;
  }
}

/** The session id a session subject named (always present on session subjects). */
function sid(id: string | null): string {
  if (id === null) throw new ProtocolError('internal', 'missing session id');
  return id;
}

/** What a drain reports: writers that settled in time, writers still running, queued requests dropped. */
export interface DrainReport {
  readonly drained: number;
  readonly timedOut: number;
  readonly dropped: number;
}
