import { MessageChannel } from 'node:worker_threads';
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
import { SessionMessages } from '../daemon/session-messages.ts';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import { PortRpc } from './port-rpc.ts';
import type { HostOptions, MainSide, WorkerSide } from './worker-messages.ts';

/** What the pool hands to the daemon: the notes worker hosts send. */
export type HostPoolEvents = { readonly [K in keyof MainSide['notes']]: (note: MainSide['notes'][K]) => void };

interface Host {
  readonly rpc: PortRpc<MainSide, WorkerSide>;
  readonly task: Promise<{ threadId: number }>;
  sessions: number;
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
 */
export class HostPool {
  readonly #pool: Piscina;
  readonly #hosts: Host[] = [];
  readonly #placement = new Map<string, number>();
  #closed = false;

  constructor(options: { size: number; host: HostOptions; log: EventLog; events: HostPoolEvents; shared?: () => SharedFilesPort | null }) {
    this.#pool = new Piscina({
      filename: new URL(isTs ? './worker-entry.ts' : './worker-entry.js', import.meta.url).href,
      minThreads: options.size,
      maxThreads: options.size,
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
      atomics: 'disabled',
      ...(isTs ? { execArgv: ['--conditions=@baton/source', '--import', 'tsx'] } : {}),
    });
    const messages = new SessionMessages(options.log);
    const sharedFiles = (): SharedFilesPort => {
      const port = options.shared?.() ?? null;
      if (port === null) throw new ProtocolError('unavailable', 'shared project files are not available (not in a cluster, or not joined yet)');
      return port;
    };
    for (let i = 0; i < options.size; i++) {
      const { port1, port2 } = new MessageChannel();
      const rpc = new PortRpc<MainSide, WorkerSide>(port1, {
        calls: {
          'log.append': ({ stream, records }) => {
            checkWorkerAppend(stream, records);
            return options.log.append(stream, records);
          },
          'log.messages': ({ sessionId, ids }) => messages.byIds(sessionId, ids),
          'log.recentMain': ({ sessionId, limit }) => messages.recentMain(sessionId, limit),
          'memory.sync': ({ projectId }) => sharedFiles().sync(projectId),
          'memory.commit': (request) => sharedFiles().commit(request),
        },
        notes: options.events,
      });
      const task = this.#pool.run({ port: port2, options: options.host }, { transferList: [port2] }) as Promise<{ threadId: number }>;
      task.catch((err: unknown) => options.events.log({ level: 'error', msg: 'actor host stopped', data: { host: i, error: String(err) } }));
      this.#hosts.push({ rpc, task, sessions: 0 });
    }
  }

  get size(): number {
    return this.#hosts.length;
  }

  get utilization(): number {
    return this.#pool.utilization;
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
    const index = this.#placement.get(sessionId);
    if (index === undefined) return;
    this.#placement.delete(sessionId);
    const host = this.#hosts[index];
    if (host !== undefined) host.sessions--;
  }

  /** Calls the host of `sessionId`; rejects with the host's error code (`not_found`, …) or `unavailable` once closed. */
  call<K extends keyof WorkerSide['calls']>(sessionId: string, kind: K, request: WorkerSide['calls'][K]['request']): Promise<WorkerSide['calls'][K]['reply']> {
    if (this.#closed) return Promise.reject(new ProtocolError('unavailable', 'the actor pool is closed'));
    return this.#hostFor(sessionId).rpc.call(kind, request);
  }

  /** Shuts the hosts down (cancelling any writer still running) and closes the pool; later calls are refused. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#hosts.map((h) => h.rpc.call('shutdown', {}).catch(() => {})));
    for (const h of this.#hosts) h.rpc.close(new ProtocolError('unavailable', 'the actor pool closed'));
    await Promise.allSettled(this.#hosts.map((h) => h.task));
    await this.#pool.close();
  }
}
