import type { WriterOutcome } from '@baton/protocol';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Failure, WriterPerf } from '@baton/actors';
import type { EventLog } from '@baton/log-schema';
import type { HostOptions, MainToWorker, WorkerToMain } from './worker-messages.ts';

type Request = MainToWorker extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

export interface HostPoolEvents {
  publish(sessionId: string, event: Record<string, unknown>): void;
  sessionInput(sessionId: string, type: string, payload: Record<string, unknown>): void;
  writerSettled(msg: { sessionId: string; writerId: string; outcome: WriterOutcome; failure: Failure | null; reason: string | null; perf: WriterPerf }): void;
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Record<string, unknown>): void;
}

interface Host {
  readonly port: MessagePort;
  readonly task: Promise<{ threadId: number }>;
  sessions: number;
}

const isTs = import.meta.url.endsWith('.ts');

/**
 * A Piscina pool whose workers each run one long-lived actor host task (`atomics: 'disabled'`, because the hosts keep
 * actors, timers and sockets alive between messages). Sessions are pinned to the least-loaded host when loaded.
 */
export class HostPool {
  readonly #pool: Piscina;
  readonly #hosts: Host[] = [];
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #placement = new Map<string, number>();
  readonly #log: EventLog;
  readonly #events: HostPoolEvents;
  #nextId = 1;
  #closed = false;

  constructor(options: { size: number; host: HostOptions; log: EventLog; events: HostPoolEvents }) {
    this.#log = options.log;
    this.#events = options.events;
    this.#pool = new Piscina({
      filename: new URL(isTs ? './worker-entry.ts' : './worker-entry.js', import.meta.url).href,
      minThreads: options.size,
      maxThreads: options.size,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      atomics: 'disabled',
      ...(isTs ? { execArgv: ['--import', 'tsx'] } : {}),
    });
    for (let i = 0; i < options.size; i++) {
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (msg: WorkerToMain) => this.#onMessage(port1, msg));
      const task = this.#pool.run({ port: port2, options: options.host }, { transferList: [port2] }) as Promise<{ threadId: number }>;
      task.catch((err: unknown) => this.#events.log('error', 'actor host stopped', { host: i, error: String(err) }));
      this.#hosts.push({ port: port1, task, sessions: 0 });
    }
  }

  get size(): number {
    return this.#hosts.length;
  }

  get utilization(): number {
    return this.#pool.utilization;
  }

  #onMessage(port: MessagePort, msg: WorkerToMain): void {
    switch (msg.kind) {
      case 'reply': {
        const p = this.#pending.get(msg.id);
        this.#pending.delete(msg.id);
        if (msg.error !== undefined) p?.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
        else p?.resolve(msg.result);
        return;
      }
      case 'log.append':
        this.#log.append(msg.stream, msg.records).then(
          (results) => port.postMessage({ kind: 'log.appended', id: msg.id, results } satisfies MainToWorker),
          (err: unknown) => port.postMessage({ kind: 'log.appended', id: msg.id, error: { code: 'internal', message: String(err) } } satisfies MainToWorker),
        );
        return;
      case 'publish':
        this.#events.publish(msg.sessionId, msg.event);
        return;
      case 'writer.settled':
        this.#events.writerSettled(msg);
        return;
      case 'session.input':
        this.#events.sessionInput(msg.sessionId, msg.type, msg.payload);
        return;
      case 'log':
        this.#events.log(msg.level, msg.msg, msg.data);
        return;
    }
  }

  #call<T>(host: Host, req: Request): Promise<T> {
    if (this.#closed && req.kind !== 'shutdown') {
      return Promise.reject(Object.assign(new Error('the actor pool is closed'), { code: 'unavailable' }));
    }
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      host.port.postMessage({ ...req, id });
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

  call<T>(sessionId: string, req: Request): Promise<T> {
    return this.#call<T>(this.#hostFor(sessionId), req);
  }

  /** Asks every host to cancel a writer (only its host knows it). */
  async cancelWriter(writerId: string, reason: string): Promise<void> {
    await Promise.all(this.#hosts.map((h) => this.#call(h, { kind: 'writer.cancel', writerId, reason }).catch(() => {})));
  }

  /** Shuts the hosts down (cancelling any writer still running) and closes the pool; later calls are refused. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#hosts.map((h) => this.#call(h, { kind: 'shutdown' }).catch(() => {})));
    for (const p of this.#pending.values()) p.reject(Object.assign(new Error('the actor pool closed'), { code: 'unavailable' }));
    this.#pending.clear();
    await Promise.allSettled(this.#hosts.map((h) => h.task));
    await this.#pool.close();
  }
}
