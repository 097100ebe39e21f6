/**
 * A Baton daemon in its own process, for the benchmarks that measure it from outside (`concurrency`, `gateway`, `memory`,
 * `session-load`): its own NATS connection, an LMDB log in `<dataDir>/events`, memory tree under `<dataDir>`, the
 * given pool size and residency; no model unless `modelBaseURL` is given (the benchmarks without one open sessions with
 * checkpoints disabled, so no writer runs).
 *
 * Started by `spawnBenchChild('./daemon-child.ts', config)`. Messages to the parent: `ready` (served: start-up repair
 * done, subscriptions flushed to the server), `memory` (answer to `{ type: 'memory', gc, workers? }`: the process's
 * memory, after a forced GC when the child runs with `--expose-gc`), `stopped`. On `{ type: 'stop' }` or SIGTERM it
 * stops like `baton daemon` does (drain, stop, close the log and the connection) and exits.
 *
 * With `gcWorkers`, the worker threads Piscina starts get one more `--import`: `WORKER_GC_PRELOAD` below, as a
 * `data:` URL (the `Worker` constructor of `node:worker_threads` is wrapped before the daemon starts; Piscina reads it
 * when it creates a worker). On `'gc'` over the BroadcastChannel `baton-bench-gc` each worker collects (`--expose-gc`
 * is a V8 flag every thread of the process shares) and answers its heap figures, so a `memory` request collects and
 * reports every actor host's heap too. Nothing else of the workers is touched.
 *
 * With `workerCpuProfDir` (opt-in, for profiling the benchmark only), the worker threads also get `--cpu-prof
 * --cpu-prof-dir=<dir>` the same way: Piscina gives its workers an explicit `execArgv`, so a `--cpu-prof` on this
 * process alone profiles the main thread only. Each worker writes its `.cpuprofile` when it exits (on stop).
 */
import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { NatsTransport } from '@baton/client';
import { BatonDaemon, LmdbEventLog, type Residency } from '@baton/runtime';
import { childConfig, runChild, sendToParent, stopRequested, type ChildMessage } from './bench-process.ts';

/** What a worker answers on the channel (bytes). */
export interface WorkerHeap {
  readonly threadId: number;
  readonly usedHeap: number;
  readonly totalHeap: number;
  readonly externalMemory: number;
  readonly gc: boolean;
}

const GC_CHANNEL = 'baton-bench-gc';

/** The worker side (plain JavaScript: it is imported before tsx could load a TypeScript file in the worker). */
const WORKER_GC_PRELOAD = `
import { getHeapStatistics } from 'node:v8';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
if (!isMainThread) {
  const channel = new BroadcastChannel(${JSON.stringify(GC_CHANNEL)});
  channel.onmessage = (event) => {
    if (event.data !== 'gc') return;
    const gc = globalThis.gc;
    gc?.();
    setImmediate(() => {
      gc?.();
      const h = getHeapStatistics();
      channel.postMessage({ threadId, usedHeap: h.used_heap_size, totalHeap: h.total_heap_size, externalMemory: h.external_memory, gc: gc !== undefined });
    });
  };
  channel.unref();
}
`;

export interface DaemonChildConfig {
  readonly natsUrl: string;
  readonly dataDir: string;
  readonly poolSize: number;
  readonly residency?: Partial<Residency>;
  /** Preload `WORKER_GC_PRELOAD` into the worker threads (see above). */
  readonly gcWorkers?: boolean;
  /** Profile the worker threads' CPU into this directory (see above). */
  readonly workerCpuProfDir?: string;
  /** The model the writers call (default: an address nothing answers on, for sessions opened without checkpoints). */
  readonly modelBaseURL?: string;
  /** The daemon's rebuild tail (default: the daemon's own). */
  readonly tail?: { readonly minTokens: number; readonly maxTokens: number; readonly minTextMessages: number };
}

/** What `{ type: 'memory' }` answers (bytes). */
export interface DaemonMemory {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** From /proc/self/status (Linux; 0 elsewhere): peak RSS and the anonymous / file-backed parts of the RSS. */
  readonly hwm: number;
  readonly rssAnon: number;
  readonly rssFile: number;
  readonly gc: boolean;
  /** Resident bytes of the LMDB data file's memory mappings (/proc/self/smaps) and how many mappings there are. */
  readonly logMapRss: number;
  readonly logMappings: number;
  /** The actor hosts' heaps, after a GC in each (only with `gcWorkers`). */
  readonly workers: readonly WorkerHeap[];
}

function procStatusBytes(field: string): number {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

type WorkerOptions = { execArgv?: string[] } & Record<string, unknown>;
type WorkerClass = new (filename: string | URL, options?: WorkerOptions) => object;

/** Makes every worker thread started from now on get `extra` after its own `execArgv`. */
function addWorkerArgs(extra: readonly string[]): void {
  const threads = createRequire(import.meta.url)('node:worker_threads') as { Worker: WorkerClass };
  const Original = threads.Worker;
  threads.Worker = class extends Original {
    constructor(filename: string | URL, options: WorkerOptions = {}) {
      super(filename, { ...options, execArgv: [...(options.execArgv ?? process.execArgv), ...extra] });
    }
  };
}

/** Asks every worker to collect and report its heap; waits for `count` answers (at most 10 s). */
async function collectWorkers(count: number): Promise<WorkerHeap[]> {
  if (count === 0) return [];
  const channel = new BroadcastChannel(GC_CHANNEL);
  const heaps: WorkerHeap[] = [];
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      channel.onmessage = (event: unknown) => {
        const data = (event as { data?: unknown }).data;
        if (typeof data !== 'object' || data === null) return;
        heaps.push(data as WorkerHeap);
        if (heaps.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      };
      channel.postMessage('gc');
    });
  } finally {
    channel.close();
  }
  return heaps.sort((a, b) => a.threadId - b.threadId);
}

/** Resident bytes of the mappings of `file` in this process (Linux /proc/self/smaps; zeros elsewhere). */
function mappedRss(file: string): { rss: number; mappings: number } {
  let text: string;
  try {
    text = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return { rss: 0, mappings: 0 };
  }
  let rss = 0;
  let mappings = 0;
  let inFile = false;
  for (const line of text.split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      inFile = line.trimEnd().endsWith(` ${file}`);
      if (inFile) mappings++;
    } else if (inFile && line.startsWith('Rss:')) {
      rss += Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024;
    }
  }
  return { rss, mappings };
}

async function measureMemory(collect: boolean, workers: number, logFile: string): Promise<DaemonMemory> {
  const heaps = collect ? await collectWorkers(workers) : [];
  const gc = (globalThis as { gc?: () => void }).gc;
  const collected = collect && gc !== undefined;
  if (collected) {
    // Twice, with a turn in between: finalizers and weak callbacks of the first pass free more in the second.
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  const usage = process.memoryUsage();
  const logMap = mappedRss(logFile);
  return {
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    hwm: procStatusBytes('VmHWM'),
    rssAnon: procStatusBytes('RssAnon'),
    rssFile: procStatusBytes('RssFile'),
    gc: collected,
    logMapRss: logMap.rss,
    logMappings: logMap.mappings,
    workers: heaps,
  };
}

async function main(): Promise<void> {
  const config = childConfig<DaemonChildConfig>();
  const stop = stopRequested();
  if (config.gcWorkers === true) addWorkerArgs(['--import', `data:text/javascript,${encodeURIComponent(WORKER_GC_PRELOAD)}`]);
  if (config.workerCpuProfDir !== undefined) addWorkerArgs(['--cpu-prof', `--cpu-prof-dir=${config.workerCpuProfDir}`]);
  const transport = await NatsTransport.connect({ servers: config.natsUrl, name: `bench-daemon-${process.pid}` });
  mkdirSync(join(config.dataDir, 'events'), { recursive: true });
  const log = LmdbEventLog.open({ path: join(config.dataDir, 'events') });
  const daemon = BatonDaemon.start({
    transport,
    log,
    dataDir: config.dataDir,
    poolSize: config.poolSize,
    // Without `modelBaseURL`, never called: those benchmarks open every session with checkpoints disabled.
    model: config.modelBaseURL === undefined ? { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'bench' } : { baseURL: config.modelBaseURL, apiKey: 'bench-writer-key', maxRetries: 0, timeoutMs: 60_000 },
    ...(config.tail !== undefined ? { tail: config.tail } : {}),
    ...(config.residency !== undefined ? { residency: config.residency } : {}),
    logger: (level, msg, data) => {
      if (level === 'error' || level === 'warn') process.stderr.write(`[daemon ${level}] ${msg} ${data === undefined ? '' : JSON.stringify(data)}\n`);
    },
  });
  process.on('message', (m: ChildMessage) => {
    if (m.type !== 'memory') return;
    void measureMemory(m['gc'] === true, config.gcWorkers === true && m['workers'] !== false ? config.poolSize : 0, join(config.dataDir, 'events', 'data.mdb')).then((memory) => sendToParent({ type: 'memory', ...memory }));
  });
  await daemon.ready();
  await transport.flush();
  await sendToParent({ type: 'ready', pid: process.pid });
  await stop;
  await daemon.stop();
  await log.close();
  await transport.close();
  await sendToParent({ type: 'stopped' });
  process.exit(0);
}

runChild(main);
