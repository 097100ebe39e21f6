import { MessageChannel, type ResourceLimits, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import {
  COMMIT_RECORDS,
  WRITER_RECORDS,
  checkAppendInputs,
  parseStream,
  type AppendInput,
  type EventLog,
} from '@baton/log-schema';
import { ProtocolError } from '@baton/protocol';
import { SessionMessages } from './session-messages.ts';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import { CallGate } from './call-gate.ts';
import { PortRpc } from './port-rpc.ts';
import { ThreadLoad } from './thread-load.ts';
import { WorkerSuspects } from './worker-suspects.ts';
import type { HostOptions, MainSide, WorkerSide } from './worker-messages.ts';

/** What the pool hands to the daemon: the notes worker hosts send (but `host.started`, which the pool keeps). */
export type HostPoolEvents = { readonly [K in Exclude<keyof MainSide['notes'], 'host.started'>]: (note: MainSide['notes'][K]) => void };

/** One worker of the pool now: its slot, its thread, how busy its event loop is, what it holds and what waits on it. */
export interface WorkerLoad {
  readonly host: number;
  /** Null until its host reported (a replacement thread still starting). */
  readonly threadId: number | null;
  /** Event-loop utilisation in [0, 1] over the recent past (see `ThreadLoad`); 0 while it starts. */
  readonly utilization: number;
  /** Sessions placed on it. */
  readonly sessions: number;
  /** Calls sent to it and not answered yet. */
  readonly pendingCalls: number;
}

/**
 * A worker thread that died with the sessions placed on it; its calls were answered `error`, but those of the
 * sessions it convicted of killing their threads (`quarantined`), which were answered with their quarantine error.
 */
export interface HostExit {
  readonly host: number;
  readonly sessions: readonly string[];
  readonly error: ProtocolError;
  readonly quarantined: ReadonlyMap<string, ProtocolError>;
}

/** Heap limits of each worker thread by default: one runaway session stops its worker, not the process. */
export const DEFAULT_WORKER_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 1024 };

export interface HostPoolOptions {
  readonly size: number;
  readonly host: HostOptions;
  readonly log: EventLog;
  readonly events: HostPoolEvents;
  readonly shared?: () => SharedFilesPort | null;
  /** A worker died: its sessions' actors are gone (the pool already started its replacement). */
  readonly exited?: (exit: HostExit) => void;
  /** V8 limits of each worker (default `DEFAULT_WORKER_RESOURCE_LIMITS`); a worker that reaches them dies alone. */
  readonly resourceLimits?: ResourceLimits;
  /** Node options of the workers, after those the pool needs itself. */
  readonly execArgv?: readonly string[];
  /** Thread deaths with a session's calls in flight after which it is quarantined (default 2; see `WorkerSuspects`). */
  readonly deathsToQuarantine?: number;
  /** A worker thread died before its host started: the pool cannot serve (see `startFailure`). Told once. */
  readonly startFailed?: (error: ProtocolError) => void;
}

interface Host {
  readonly rpc: PortRpc<MainSide, WorkerSide>;
  /** Its task, settled either way. */
  readonly ended: Promise<void>;
  sessions: number;
  threadId: number | null;
  /** Shared and exclusive (a suspect's) calls. */
  readonly gate: CallGate;
  /** Calls sent and not answered yet, by session: who was in flight if the thread dies. */
  readonly inFlight: Map<string, number>;
}

// Run from the TypeScript sources (tests, tsx), the workers load `worker-entry.ts` through tsx and resolve the
// workspace packages to their sources too; run from the build, they load `worker-entry.js` with plain node.
const isTs = import.meta.url.endsWith('.ts');

/**
 * Worker hosts append only writer and commit records, checked against their stream's schema at the thread
 * boundary; a session stream is written by the main thread alone.
 */
function checkWorkerAppend(stream: string, records: readonly AppendInput[]): void {
  const kind = parseStream(stream)?.kind;
  if (kind === 'writer') checkAppendInputs(WRITER_RECORDS, stream, records);
  else if (kind === 'commits') checkAppendInputs(COMMIT_RECORDS, stream, records);
  else throw new ProtocolError('bad_request', `a worker host may not append to ${stream}`);
}

/**
 * A Piscina pool whose workers each run one long-lived actor host task (`atomics: 'disabled'`, because the hosts keep
 * actors, timers and sockets alive between messages). Sessions are pinned to the least-loaded host when loaded.
 *
 * A worker may die (an out-of-memory under its `resourceLimits`, a native abort, `process.exit` in a tool, a
 * `terminate()`): Piscina rejects its task and starts a replacement thread. The pool then answers every call still
 * waiting on that host `unavailable` (retryable), runs a new host task in its place, and reports the sessions that
 * lived there (`exited`): their actors are gone, and every call for one of them but `session.load` is refused
 * `unavailable` until it is loaded again. A session whose calls were in flight on threads that died is suspected of
 * killing them and, past `deathsToQuarantine` deaths, quarantined (`WorkerSuspects`), so that one session whose fold
 * allocates without bound cannot kill thread after thread while every other session waits.
 */
export class HostPool {
  readonly #pool: Piscina;
  readonly #o: HostPoolOptions;
  readonly #hosts: Host[] = [];
  readonly #placement = new Map<string, number>();
  /** Sessions whose host died since they were loaded. */
  readonly #lost = new Set<string>();
  readonly #messages: SessionMessages;
  readonly #load = new ThreadLoad();
  readonly #suspects: WorkerSuspects;
  /** Sessions convicted of killing their worker threads, with the error their calls get. */
  readonly #quarantined = new Map<string, ProtocolError>();
  #closed = false;
  #exits = 0;
  #startFailure: ProtocolError | null = null;

  constructor(options: HostPoolOptions) {
    this.#o = options;
    this.#suspects = new WorkerSuspects(options.deathsToQuarantine);
    this.#pool = new Piscina({
      filename: new URL(isTs ? './worker-entry.ts' : './worker-entry.js', import.meta.url).href,
      minThreads: options.size,
      maxThreads: options.size,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      atomics: 'disabled',
      resourceLimits: options.resourceLimits ?? DEFAULT_WORKER_RESOURCE_LIMITS,
      execArgv: [...(isTs ? ['--conditions=@baton/source', '--import', 'tsx'] : []), ...(options.execArgv ?? [])],
    });
    // A worker that dies with no task of ours is reported as a pool error: one that failed while it started leaves a
    // host waiting for a thread Piscina will not start.
    this.#pool.on('error', (err: unknown) => {
      options.events.log({ level: 'error', msg: 'worker thread failed', data: { error: String(err) } });
      const waiting = this.#hosts.findIndex((h) => h.threadId === null);
      const host = this.#hosts[waiting];
      if (!this.#closed && host !== undefined) this.#failedToStart(waiting, host, err instanceof Error ? err : new Error(String(err)));
    });
    this.#messages = new SessionMessages(options.log);
    for (let i = 0; i < options.size; i++) this.#hosts.push(this.#startHost(i));
  }

  #sharedFiles(): SharedFilesPort {
    const port = this.#o.shared?.() ?? null;
    if (port === null) throw new ProtocolError('unavailable', 'shared project files are not available (not in a cluster, or not joined yet)');
    return port;
  }

  /** Runs the actor host task of slot `index` on the pool (on whichever thread is free: a new one after a death). */
  #startHost(index: number): Host {
    const { log, events } = this.#o;
    const { port1, port2 } = new MessageChannel();
    const rpc = new PortRpc<MainSide, WorkerSide>(port1, {
      calls: {
        'log.append': ({ stream, records }) => {
          checkWorkerAppend(stream, records);
          return log.append(stream, records);
        },
        'log.messages': ({ sessionId, ids }) => this.#messages.byIds(sessionId, ids),
        'log.recentMain': ({ sessionId, limit }) => this.#messages.recentMain(sessionId, limit),
        'memory.sync': ({ projectId }) => this.#sharedFiles().sync(projectId),
        'memory.commit': (request) => this.#sharedFiles().commit(request),
      },
      notes: {
        ...events,
        'host.started': ({ threadId }) => {
          host.threadId = threadId;
        },
      },
    });
    const task = this.#pool.run({ port: port2, options: this.#o.host }, { transferList: [port2] }) as Promise<{ threadId: number }>;
    const host: Host = {
      rpc,
      sessions: 0,
      threadId: null,
      gate: new CallGate(),
      inFlight: new Map(),
      ended: task.then(
        () => {},
        (err: unknown) => this.#hostDied(index, host, err),
      ),
    };
    return host;
  }

  /** The task of `host` failed: its thread died (or the pool is being destroyed). */
  #hostDied(index: number, host: Host, err: unknown): void {
    if (this.#closed || this.#hosts[index] !== host) return;
    this.#exits++;
    const cause = err instanceof Error ? err : new Error(String(err));
    if (host.threadId === null) {
      this.#failedToStart(index, host, cause);
      return;
    }
    const error = new ProtocolError('unavailable', `the worker thread of actor host ${index} exited (${cause.message}); retry the request`, { reason: 'worker' }, { cause });
    this.#o.events.log({ level: 'error', msg: 'worker thread exited', data: { host: index, error: cause.message, ...(cause.stack !== undefined ? { stack: cause.stack } : {}) } });
    const quarantined = new Map<string, ProtocolError>();
    for (const [sessionId, deaths] of this.#suspects.died(host.inFlight.keys())) {
      const convicted = new ProtocolError(
        'quarantined',
        `session ${sessionId} is quarantined: its calls were in flight on ${deaths} worker threads that died (the last: ${cause.message})`,
        { stream: `session/${sessionId}`, reason: 'worker-deaths', deaths },
        { cause },
      );
      quarantined.set(sessionId, convicted);
      this.#quarantined.set(sessionId, convicted);
      this.#o.events.log({ level: 'error', msg: 'session quarantined: its worker threads died under it', data: { sessionId, deaths, error: cause.message } });
    }
    const sessions: string[] = [];
    for (const [sessionId, at] of this.#placement) {
      if (at !== index) continue;
      sessions.push(sessionId);
      this.#placement.delete(sessionId);
      this.#lost.add(sessionId);
    }
    // The replacement first: a call made while the old one's pending calls are rejected goes to the new host.
    this.#hosts[index] = this.#startHost(index);
    host.rpc.close(error);
    this.#o.exited?.({ host: index, sessions, error, quarantined });
  }

  /**
   * A thread died before its host started (a preload or the worker script that throws, a heap limit too small to
   * start in): the next one would die the same way, and Piscina starts no more threads once one failed while it
   * started. So nothing is replaced: every call waiting on the pool and every later one is refused `unavailable`
   * (reason `workers_failed`) naming the cause, and the owner is told once, to say so and stop.
   */
  #failedToStart(index: number, host: Host, cause: Error): void {
    const error =
      this.#startFailure ??
      new ProtocolError('unavailable', `the daemon's worker threads cannot start (${cause.message}); it serves nothing until it is restarted with that fixed`, { reason: 'workers_failed' }, { cause });
    this.#o.events.log({ level: 'error', msg: 'worker thread failed to start', data: { host: index, error: cause.message, ...(cause.stack !== undefined ? { stack: cause.stack } : {}) } });
    // Calls to a host that never started would wait forever; one that started is left to `close()` to shut down.
    host.rpc.close(error);
    for (const other of this.#hosts) if (other.threadId === null) other.rpc.close(error);
    if (this.#startFailure !== null) return;
    this.#startFailure = error;
    this.#o.startFailed?.(error);
  }

  /** Why the pool cannot serve, once a worker thread died while it started; null while it can. */
  get startFailure(): ProtocolError | null {
    return this.#startFailure;
  }

  get size(): number {
    return this.#hosts.length;
  }

  /** How many worker threads died since the pool started (each was replaced). */
  get exits(): number {
    return this.#exits;
  }

  /** The worker threads now (Piscina's), for tests and diagnostics. */
  get threads(): readonly Worker[] {
    return this.#pool.threads;
  }

  /** Each worker now, in slot order. */
  workers(): WorkerLoad[] {
    const threads = new Map(this.#pool.threads.map((t) => [t.threadId, t]));
    this.#load.keepOnly(new Set(threads.keys()));
    return this.#hosts.map((h, host) => {
      const thread = h.threadId === null ? undefined : threads.get(h.threadId);
      return {
        host,
        threadId: thread === undefined ? null : h.threadId,
        utilization: thread === undefined ? 0 : this.#load.utilization(thread),
        sessions: h.sessions,
        pendingCalls: h.rpc.pendingCalls,
      };
    });
  }

  /** The host a session lives on, placing it on the least-loaded host the first time. */
  #hostFor(sessionId: string): Host {
    let index = this.#placement.get(sessionId);
    if (index === undefined) {
      index = 0;
      for (let i = 1; i < this.#hosts.length; i++) if ((this.#hosts[i]?.sessions ?? 0) < (this.#hosts[index]?.sessions ?? 0)) index = i;
      this.#placement.set(sessionId, index);
      const h = this.#hosts[index];
      if (h !== undefined) h.sessions++;
    }
    const host = this.#hosts[index];
    if (host === undefined) throw new Error('no actor host');
    return host;
  }

  /** Forgets where a session lived (it left memory); its next load places it again. */
  release(sessionId: string): void {
    this.#lost.delete(sessionId);
    const index = this.#placement.get(sessionId);
    if (index === undefined) return;
    this.#placement.delete(sessionId);
    const host = this.#hosts[index];
    if (host !== undefined) host.sessions--;
  }

  /**
   * Calls the host of `sessionId`; rejects with the host's error code (`not_found`, …), or `unavailable` once closed,
   * when the host's thread dies before it answers, or while a session whose host died is not loaded again; with
   * `quarantined` once the session was convicted of killing its worker threads. A suspect's call is sent alone.
   */
  call<K extends keyof WorkerSide['calls']>(sessionId: string, kind: K, request: WorkerSide['calls'][K]['request']): Promise<WorkerSide['calls'][K]['reply']> {
    if (this.#closed) return Promise.reject(new ProtocolError('unavailable', 'the actor pool is closed'));
    if (this.#startFailure !== null) return Promise.reject(this.#startFailure);
    const quarantined = this.#quarantined.get(sessionId);
    if (quarantined !== undefined) return Promise.reject(quarantined);
    if (this.#lost.has(sessionId)) {
      if (kind !== 'session.load') return Promise.reject(new ProtocolError('unavailable', `session ${sessionId} is being reloaded after its worker thread exited; retry the request`, { reason: 'worker' }));
      this.#lost.delete(sessionId);
    }
    const host = this.#hostFor(sessionId);
    const exclusive = this.#suspects.has(sessionId);
    const entered = host.gate.enter(exclusive);
    if (entered === null) return this.#send(host, exclusive, sessionId, kind, request);
    return entered.then(() => this.#send(host, exclusive, sessionId, kind, request));
  }

  /** Sends a call that entered `host`'s gate, counted in flight for `sessionId` until it is answered. */
  #send<K extends keyof WorkerSide['calls']>(host: Host, exclusive: boolean, sessionId: string, kind: K, request: WorkerSide['calls'][K]['request']): Promise<WorkerSide['calls'][K]['reply']> {
    host.inFlight.set(sessionId, (host.inFlight.get(sessionId) ?? 0) + 1);
    const answered = (): void => {
      const left = (host.inFlight.get(sessionId) ?? 1) - 1;
      if (left > 0) host.inFlight.set(sessionId, left);
      else host.inFlight.delete(sessionId);
      host.gate.leave(exclusive);
    };
    return host.rpc.call(kind, request).then(
      (reply) => {
        answered();
        if (exclusive && kind !== 'session.load') this.#suspects.cleared(sessionId);
        return reply;
      },
      (err: unknown) => {
        answered();
        // Its thread died and the session was convicted for it: the call is answered with the quarantine.
        throw this.#quarantined.get(sessionId) ?? err;
      },
    );
  }

  /**
   * Shuts the hosts down (cancelling any writer still running) and ends the pool; later calls are refused. Only hosts
   * that started are asked (a host whose thread never started, say one that fails at start-up, would never answer);
   * once their tasks have ended, the pool's threads are ended, any still starting with them.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const started = this.#hosts.filter((h) => h.threadId !== null);
    await Promise.all(started.map((h) => h.rpc.call('shutdown', {}).catch(() => {})));
    for (const h of this.#hosts) h.rpc.close(new ProtocolError('unavailable', 'the actor pool closed'));
    await Promise.all(started.map((h) => h.ended));
    await this.#pool.destroy();
  }
}
