import { join } from 'node:path';
import type { InboundMessage, Transport, TransportSubscription } from '@baton/client';
import type { EventLog } from '@baton/log-schema';
import { HistoryStore } from '@baton/memory-store';
import {
  OPEN_QUEUE_GROUP,
  OpenRequestSchema,
  ProtocolError,
  isScopableProject,
  parseRequest,
  projectOfSubject,
  type Encoding,
  type RuntimeCluster,
  type Subjects,
} from '@baton/protocol';
import type { z } from 'zod';
import { joinFailureOf, type JoinFailure } from '../cluster/join-failure.ts';
import type { JoinedSharedFiles } from '../cluster/join-shared-files.ts';
import { ReplicatedEventLog } from '../cluster/replicated-event-log.ts';
import { retryJoin } from '../cluster/retry-join.ts';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import type { Clock } from '../time/clock.ts';
import { ArrivalOrder } from './arrival-order.ts';
import { resolveClusterOptions, type ClusterOptions, type ResolvedClusterOptions } from './cluster-options.ts';
import { SCOPE_HEADER, type ClusterRouting } from './cluster-routing.ts';
import type { DaemonLogger } from './daemon-options.ts';
import { joinCluster, leaveJoined, type JoinedCluster } from './join-cluster.ts';
import { requireSessionId, type RequestDispatch } from './request-dispatch.ts';
import type { NotServing, Router } from './router.ts';
import type { SessionService } from './session-service.ts';

export interface ClusterRouterOptions {
  readonly cluster: ClusterOptions;
  readonly daemonId: string;
  /** This daemon's own event log (LMDB). */
  readonly log: EventLog;
  readonly dataDir: string;
  readonly transport: Transport;
  readonly subjects: Subjects;
  /** Whether the unscoped subjects are served too (not only a project's). */
  readonly unscoped: boolean;
  readonly clock: Clock;
  readonly newId: () => string;
  readonly logger: DaemonLogger;
  readonly sessions: () => SessionService;
  readonly requests: RequestDispatch;
}

/**
 * A daemon sharing its subjects with a cluster: it serves nothing before it joined, takes `open` through the queue
 * group (claiming a free session, or forwarding to its holder: `ClusterRouting`), subscribes the subjects of the
 * sessions it holds, serves each of their requests only while it still holds them, and hands them off on a drain.
 */
export class ClusterRouter implements Router {
  readonly #o: ClusterRouterOptions;
  readonly #options: ResolvedClusterOptions;
  /** Durability `replicated`: the log sessions and writers append to (local, then the session's replicated log). */
  readonly #replicated: ReplicatedEventLog | null;
  readonly appendLog: EventLog;
  readonly sharesProjectFiles = true;
  readonly holds: (sessionId: string) => boolean;
  /** Once joined: which daemon serves which session. */
  #routing: ClusterRouting | null = null;
  /** Once joined: the project memory files every daemon shares. */
  #shared: JoinedSharedFiles | null = null;
  /** Before joining: attempts so far and why the last one failed. */
  #joinAttempts = 0;
  #joinFailure: JoinFailure | null = null;
  /** A session's requests reach its queue in arrival order across the ownership guard. */
  readonly #arrival = new ArrivalOrder();
  /** The project-scoped subscription of each session held here. */
  readonly #scopedSubs = new Map<string, TransportSubscription>();
  #openSubs: TransportSubscription[] = [];

  /** Checks the options (`ClusterError('config')` names a bad one). */
  constructor(options: ClusterRouterOptions) {
    this.#o = options;
    this.#options = resolveClusterOptions(options.cluster);
    this.#replicated =
      this.#options.durability === 'replicated'
        ? new ReplicatedEventLog({
            local: options.log,
            writerOf: (sessionId) => this.#routing?.membership.writer(sessionId),
            onFenced: (sessionId, err) => void this.#routing?.failure(sessionId, err),
            history: new HistoryStore(join(options.dataDir, 'history')),
          })
        : null;
    this.appendLog = this.#replicated ?? options.log;
    this.holds = (sessionId) => this.#routing?.membership.holds(sessionId) ?? false;
  }

  sharedFiles(): SharedFilesPort | null {
    return this.#shared?.files ?? null;
  }

  /**
   * Joins the cluster and claims what no daemon had claimed, before serving anything. A failed attempt (no quorum yet,
   * JetStream disabled, too many replicas, no permission) is logged with its cause, shown in `runtime.status`, and
   * tried again after a doubling delay (up to 5 s) until it succeeds or `signal` aborts (the daemon stops).
   */
  async start(recovered: Promise<void>, signal: AbortSignal): Promise<void> {
    const c = this.#options;
    let logged: { readonly message: string; readonly at: number } | null = null;
    const joined = await retryJoin({
      attempt: () => this.#joinOnce(c, recovered, signal),
      classify: (err) => joinFailureOf(err, c.connection.info ?? {}, c.replicas),
      onFailure: (failure, attempts, retryInMs) => {
        this.#joinAttempts = attempts;
        this.#joinFailure = failure;
        // Once per cause, then again every 30 s while it lasts.
        const now = this.#o.clock.now();
        if (logged !== null && logged.message === failure.message && now - logged.at < 30_000) return;
        logged = { message: failure.message, at: now };
        this.#o.logger('warn', 'cannot join the cluster yet', { reason: failure.code, cause: failure.message, attempts, retryInMs });
      },
      signal,
      discard: (late) => this.#undoJoin(late),
      delayMs: c.joinRetryMs,
      maxDelayMs: 5_000,
      clock: this.#o.clock,
    });
    if (joined === null) return;
    this.#joinFailure = null;
    if (this.#joinAttempts > 0) this.#o.logger('info', 'joined the cluster', { attempts: this.#joinAttempts + 1 });
  }

  /** One attempt to join (`joinCluster`) and adopt this data directory's unclaimed sessions; a failure is undone. */
  async #joinOnce(c: ResolvedClusterOptions, recovered: Promise<void>, signal: AbortSignal): Promise<JoinedCluster> {
    const joined = await joinCluster({
      cluster: c,
      daemonId: this.#o.daemonId,
      transport: this.#o.transport,
      subjects: this.#o.subjects,
      log: this.#o.log,
      replicated: this.#replicated,
      dataDir: this.#o.dataDir,
      wallClock: () => this.#o.clock.now(),
      logger: this.#o.logger,
      recovered,
      serve: (sessionId) => this.#serveSession(sessionId),
      forget: (sessionId) => this.#o.sessions().forget(sessionId),
    });
    if (signal.aborted) {
      await leaveJoined(joined);
      throw new Error('the daemon stopped while joining');
    }
    this.#shared = joined.shared;
    this.#routing = joined.routing;
    try {
      const adopted = await joined.routing.adoptUnclaimed();
      if (adopted > 0) this.#o.logger('info', 'claimed the sessions of this data directory no daemon had claimed', { sessions: adopted });
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

  /** Only the holder of a session subscribes to its subjects (`#serveSession`); `open` finds or makes the holder. */
  subscribe(requests: RequestDispatch): void {
    const s = this.#o.subjects;
    const clusterOpen = (msg: InboundMessage, scope: string | undefined): void =>
      void requests.handle(msg, (value, _sid, enc) => this.#open(parseRequest(OpenRequestSchema, value), enc, msg, scope), null);
    this.#openSubs = [
      ...(this.#o.unscoped ? [requests.listen(s.open, (msg) => clusterOpen(msg, undefined), OPEN_QUEUE_GROUP)] : []),
      requests.listen(s.scopedOpenWildcard, (msg) => clusterOpen(msg, projectOfSubject(msg.subject, s.prefix) ?? ''), OPEN_QUEUE_GROUP),
    ];
  }

  /**
   * A session request: served only while this daemon holds the session (see `ClusterRouting`), and queued in arrival
   * order whatever the asynchronous guard waits for.
   */
  async sessionCall<T>(sessionId: string | null, call: () => Promise<T>): Promise<T> {
    const routing = this.#routing;
    if (routing === null) throw new ProtocolError('unavailable', 'this daemon has not joined the cluster', { reason: 'not_joined' });
    const id = requireSessionId(sessionId);
    return await this.#arrival.run(id, () => routing.guard(id), async () => {
      try {
        return await call();
      } catch (err) {
        throw routing.failure(id, err);
      }
    });
  }

  /**
   * `open` (any daemon, through the queue group): take the session when free, else ask its holder. `scope`: it came
   * on that project's subjects (the holder is told so in a header of the forwarded request).
   */
  async #open(req: z.output<typeof OpenRequestSchema>, encoding: Encoding, msg: InboundMessage, scope: string | undefined): Promise<object> {
    const routing = this.#routing;
    if (routing === null) throw new ProtocolError('unavailable', 'this daemon has not joined the cluster', { reason: 'not_joined' });
    if (scope !== undefined && req.project_id !== scope) throw new ProtocolError('bad_request', `open on the subjects of project ${scope} names project ${req.project_id}`);
    // A daemon just back from a pause (or cut off from JetStream) does not take opens until it knows what it still
    // holds: the client's next try reaches another daemon at once.
    if (!(await routing.takesOpens())) throw new ProtocolError('unavailable', "this daemon's lease lapsed (it was paused or cut off): it takes no open until it re-checked its sessions; retry", { reason: 'lease_uncertain' });
    // A token's grant is indexed in the log of the daemon that granted it, which a cluster does not share.
    if (req.handoff !== undefined) throw new ProtocolError('bad_request', 'handoff tokens are not served in cluster mode');
    const sessionId = req.session_id ?? this.#o.newId();
    const forwarded = scope === undefined ? msg : { ...msg, headers: { ...msg.headers, [SCOPE_HEADER]: scope } };
    const taken = await routing.takeOrForward(sessionId, forwarded);
    if (!taken.held) return taken.reply;
    const reply = await this.sessionCall(sessionId, () => this.#o.sessions().open(req, encoding, sessionId, scope));
    this.#serveScoped(sessionId, req.project_id);
    return reply;
  }

  /**
   * Subscribes the request subjects of a session this daemon holds (no queue group: it alone serves them): its
   * unscoped ones, and its project's once the project is known (`#serveScoped`). Unsubscribing drops both.
   */
  #serveSession(sessionId: string): TransportSubscription {
    const requests = this.#o.requests;
    const head = `${this.#o.subjects.prefix}.v1.session.${sessionId}.`;
    const unscoped = this.#o.unscoped;
    const opened = async (body: z.output<typeof OpenRequestSchema>, enc: Encoding, scope?: string): Promise<object> => {
      if (body.session_id !== sessionId) throw new ProtocolError('bad_request', `open on the subject of session ${sessionId} names ${String(body.session_id)}`);
      const reply = await this.sessionCall(sessionId, () => this.#o.sessions().open(body, enc, undefined, scope));
      this.#serveScoped(sessionId, body.project_id);
      return reply;
    };
    const own = this.#o.transport.subscribe(`${head}*`, (msg) => {
      const name = msg.subject.slice(head.length);
      if (name === 'open') {
        // A forwarded `open` of a project's subjects carries its project in a header (only daemons forward).
        const scope = msg.headers[SCOPE_HEADER];
        if (scope !== undefined || unscoped) requests.dispatch(OpenRequestSchema, (body, _sid, enc) => opened(body, enc, scope), null)(msg);
        return;
      }
      // The session's own events arrive here too; they are not requests.
      if (unscoped) requests.verbs.get(name)?.(msg);
    });
    // A session this daemon takes over has its project in its log; a new one gets it with its `open`.
    this.#serveScoped(sessionId, this.#o.sessions().projectOf(sessionId));
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
    const head = `${this.#o.subjects.prefix}.v1.p.${projectId}.session.${sessionId}.`;
    this.#scopedSubs.set(
      sessionId,
      this.#o.transport.subscribe(`${head}*`, (msg) => {
        // Events and anything that is no verb: not requests.
        this.#o.requests.scopedVerbs.get(msg.subject.slice(head.length))?.(msg);
      }),
    );
  }

  /** `runtime.status.cluster`, once joined: this daemon's view of the cluster (its lease, what it holds, the daemons it hears). */
  clusterStatus(): RuntimeCluster | null {
    if (this.#routing === null) return null;
    const view = this.#routing.membership.view();
    const ms = (n: number): number => Math.max(0, Math.round(n));
    return {
      durability: this.#options.durability,
      lease_ms: view.leaseMs,
      heartbeat_age_ms: view.heartbeatAgeMs === null ? null : ms(view.heartbeatAgeMs),
      paused: view.paused,
      sessions_held: view.sessions.length,
      daemons: view.daemons.map((d) => ({ daemon_id: d.daemonId, age_ms: ms(d.ageMs), stale: d.stale, gone: d.gone })),
    };
  }

  /** Before joining: joining, or the last join attempt's cause. */
  notServing(): NotServing | null {
    if (this.#routing !== null) return null;
    const f = this.#joinFailure;
    if (f === null) return { reason: 'joining', message: 'joining the cluster', attempts: this.#joinAttempts };
    return { reason: f.code, message: f.message, attempts: this.#joinAttempts };
  }

  joinFailing(): boolean {
    return this.#joinFailure !== null;
  }

  stopOpens(): void {
    for (const sub of this.#openSubs) sub.unsubscribe();
  }

  /** Everything this daemon had for its sessions is written; then they are handed off (it leaves the cluster). */
  async handOff(sessions: SessionService): Promise<void> {
    if (this.#routing === null) return;
    await sessions.idle();
    await sessions.flushDecisions();
    await this.#routing.leave();
  }

  async stop(): Promise<void> {
    await this.#routing?.stop();
    this.#shared?.follower.stop();
  }
}
