/**
 * Resident memory of the daemon: a Baton daemon in its own process (`daemon-child.ts`, pool 2, LMDB log, started
 * with `--expose-gc`) reports `process.memoryUsage()` and /proc/self/status (peak, anonymous and file-backed RSS)
 * after a forced GC of its main thread and of both worker threads (`worker-gc-preload.ts`, which also reports each
 * worker's heap). The clients run in this process, many at a time.
 *
 * (a) right after start, once both actor hosts have served a session (two sessions opened, given a message and
 *     closed, so every worker has loaded its code) — target ≤ 200 MiB: first the built `baton daemon` as it ships
 *     (dist/, plain node, `built-daemon.ts`; RSS read from /proc, no forced GC), then the daemon run from the
 *     sources as above (tsx compiles TypeScript in every thread, some 60 MiB more; not held to the target, since
 *     nobody runs the daemon that way), which (b) compares with;
 * (b) after 10 000 sessions were opened, given 50 messages each (2 appends of 25) and closed, once they all left
 *     memory and the daemon then stayed idle 22.5 s — target ≤ 1.2× (a) measured after the same idle time. V8 gives
 *     back heap space (the start-up's too) only after some seconds of low allocation, so both sides wait as long;
 *     the figure 2.5 s after the last close is reported too;
 * (c) in a second daemon (fresh data directory): 1 000 idle resident sessions of 200 × 2 KB messages each (4 appends
 *     of 50), i.e. 400 MB of message text — target ≤ its own start + 1.5× the raw message bytes.
 * Every daemon here runs with the glibc allocator settings the `baton` command's launcher sets (`MALLOC_TUNABLES`;
 * without them (b) stays about 0.1× higher: freed heap that fragmentation keeps).
 * The LMDB log's size is reported for (b) and (c). Sessions are opened with checkpoints disabled (no writer runs).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/memory.bench.ts`
 * (env: MEM_BENCH_CLOSED_SESSIONS, MEM_BENCH_RESIDENT_SESSIONS, MEM_BENCH_CONCURRENCY).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { MALLOC_TUNABLES } from '@baton/cli';
import type { Message } from '@baton/protocol';
import { startNatsServer } from '@baton/testing';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { MiB, printStandalone, round1, round2, spawnBenchChild, treeSize, withChildren, type BenchChild, type SectionTarget } from './bench-process.ts';
import { buildPackages, procRss, startBuiltDaemon } from './built-daemon.ts';
import { chatMessage } from './chat-messages.ts';
import type { DaemonChildConfig, DaemonMemory } from './daemon-child.ts';

export interface MemoryBenchOptions {
  /** Sessions opened, filled and closed in (b) (default 10 000). */
  readonly closedSessions?: number;
  /** Messages per closed session and per append in (b) (default 50 in appends of 25). */
  readonly closedMessages?: number;
  readonly closedBatch?: number;
  /** Characters of each message of (b) (default 1000). */
  readonly closedMessageBytes?: number;
  /** Idle resident sessions in (c) (default 1 000). */
  readonly residentSessions?: number;
  /** Messages per resident session, per append, and their size in (c) (defaults 200, 50, 2000). */
  readonly residentMessages?: number;
  readonly residentBatch?: number;
  readonly residentMessageBytes?: number;
  /** Clients in flight (default 32). */
  readonly concurrency?: number;
}

/** Row names that the targets read (keep them stable). */
export const MEMORY_ROWS = {
  start: '(a) RSS after start',
  startBuilt: '(a) RSS after start, built baton daemon',
  startIdle: '(a) RSS after start, then idle',
  afterClosed: '(b) RSS after the closed sessions',
  afterClosedRatio: '(b) ratio to (a)',
  resident: '(c) RSS with the resident sessions',
  residentBudget: '(c) growth over start / raw message bytes',
} as const;

/** Idle time after the 2.5 s measurement before (b) is measured (V8's memory reducer acts after some seconds idle). */
const IDLE_SETTLE_MS = 20_000;

const OPEN = { project_id: 'bench', model: { id: 'bench-model', context_window: 100_000_000 }, checkpoint: { enabled: false } } as const;

interface Daemon {
  readonly child: BenchChild;
  readonly client: BatonClient;
  readonly transport: NatsTransport;
  readonly dir: string;
}

async function startDaemon(natsUrl: string, track: (c: BenchChild) => BenchChild): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-mem-bench-'));
  // with the allocator settings the `baton` command starts node with (and, like it, any GLIBC_TUNABLES already set)
  const env = { GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? MALLOC_TUNABLES };
  const child = track(spawnBenchChild('./daemon-child.ts', { natsUrl, dataDir: dir, poolSize: 2, gcWorkers: true } satisfies DaemonChildConfig, { nodeArgs: ['--expose-gc'], env }));
  try {
    await child.next('ready', 120_000);
    const transport = await NatsTransport.connect({ servers: natsUrl, name: 'bench-memory-client' });
    return { child, dir, transport, client: new BatonClient(transport, { timeoutMs: 120_000 }) };
  } catch (err) {
    child.kill();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function stopDaemon(d: Daemon): Promise<void> {
  await d.transport.close().catch(() => {});
  await d.child.stop(120_000);
  await rm(d.dir, { recursive: true, force: true });
}

/** The daemon's memory after a forced GC (of the workers too, unless `workers` is false: they may still be starting). */
async function memoryOf(d: Daemon, workers = true): Promise<DaemonMemory> {
  d.child.send({ type: 'memory', gc: true, workers });
  return (await d.child.next('memory', 60_000)) as unknown as DaemonMemory;
}

/** Waits until the daemon holds `count` sessions in memory (sessions leave memory asynchronously after `close`). */
async function waitResident(d: { readonly client: BatonClient }, count: number, timeoutMs = 120_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { sessions } = await d.client.runtimeStatus();
    if (sessions === count || Date.now() > until) return sessions;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs `task(i)` for i in [0, n) with `concurrency` in flight. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      for (let i = next++; i < n; i = next++) await task(i);
    }),
  );
}

/** Opens a session, appends `count` messages of `bytes` characters in batches of `batch`; returns the content bytes. */
async function fillSession(client: BatonClient, tag: string, count: number, batch: number, bytes: number): Promise<{ sessionId: string; content: number }> {
  const { session_id } = await client.open(OPEN);
  let content = 0;
  let prompt = 1_000;
  for (let i = 0; i < count; i += batch) {
    const messages: Message[] = [];
    for (let j = i; j < Math.min(count, i + batch); j++) {
      const m = chatMessage(tag, j, bytes, prompt);
      prompt += Math.round(bytes / 4);
      content += typeof m.content === 'string' ? m.content.length : 0;
      messages.push(m);
    }
    const reply = await client.append(session_id, messages);
    if (reply.accepted !== messages.length) throw new Error(`append of ${messages.length} accepted ${reply.accepted}`);
  }
  return { sessionId: session_id, content };
}

/**
 * Both actor hosts serve a session, so both workers have loaded their code (the tokenizer included): two sessions
 * are resident at once (a session is placed on the least-loaded host), then closed again.
 */
async function warmHosts(d: { readonly client: BatonClient }): Promise<void> {
  const sessions = await Promise.all([0, 1].map(async (s) => (await fillSession(d.client, `warm${s}`, 2, 2, 500)).sessionId));
  for (const sessionId of sessions) await d.client.close(sessionId);
  await waitResident(d, 0);
}

const mib = (bytes: number): number => round1(bytes / MiB);

function memoryNote(m: DaemonMemory): string {
  const workers = m.workers.map((w) => `${mib(w.usedHeap)}/${mib(w.totalHeap)}`).join(' + ');
  return (
    `main heap ${mib(m.heapUsed)}/${mib(m.heapTotal)} MiB (used/total), worker heaps ${workers === '' ? 'n/a' : workers} MiB, ` +
    `external ${mib(m.external)} MiB, RSS anon ${mib(m.rssAnon)} + file ${mib(m.rssFile)} MiB (LMDB map ${mib(m.logMapRss)} MiB in ${m.logMappings} mapping${m.logMappings === 1 ? '' : 's'}), ` +
    `peak ${mib(m.hwm)} MiB${m.gc ? '' : ', no forced GC'}`
  );
}

export async function benchMemory(options: MemoryBenchOptions = {}): Promise<BenchSection> {
  const closedSessions = options.closedSessions ?? 10_000;
  const closedMessages = options.closedMessages ?? 50;
  const closedBatch = options.closedBatch ?? 25;
  const closedBytes = options.closedMessageBytes ?? 1000;
  const residentSessions = options.residentSessions ?? 1000;
  const residentMessages = options.residentMessages ?? 200;
  const residentBatch = options.residentBatch ?? 50;
  const residentBytes = options.residentMessageBytes ?? 2000;
  const concurrency = options.concurrency ?? 32;

  const server = await startNatsServer();
  try {
    return await withChildren(async (track) => {
      const rows: BenchRow[] = [];

      // (a) as it ships: the built command, its workers on dist/ (no TypeScript compiled in any thread)
      await buildPackages();
      const built = await startBuiltDaemon(server.url, 2);
      try {
        await warmHosts(built);
        // No forced GC here (the command has no hook for it): let the start-up garbage settle a moment.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const m = procRss(built.pid);
        rows.push({
          name: MEMORY_ROWS.startBuilt,
          value: mib(m.rss),
          unit: 'MiB',
          note: `packages/cli/bin/baton.js daemon --pool-size 2 (dist/, the allocator settings its launcher sets), both hosts warmed, no forced GC; target ≤ 200 MiB; RSS anon ${mib(m.rssAnon)} + file ${mib(m.rssFile)} MiB`,
        });
      } finally {
        await built.stop();
      }

      // (a) and (b): one daemon run from the sources (tsx in every thread), which the other figures use
      const d1 = await startDaemon(server.url, track);
      try {
        const ready = await memoryOf(d1, false);
        await warmHosts(d1);
        const start = await memoryOf(d1);
        // (b) compares like with like: the start too once the daemon was idle as long as before (b) is measured.
        await new Promise((resolve) => setTimeout(resolve, 2_500 + IDLE_SETTLE_MS));
        const startIdle = await memoryOf(d1);
        rows.push(
          { name: 'RSS at ready (before any request)', value: mib(ready.rss), unit: 'MiB', note: memoryNote(ready) },
          { name: MEMORY_ROWS.start, value: mib(start.rss), unit: 'MiB', note: `pool 2, both hosts warmed, after GC; run from the sources, tsx in every thread (the ≤ 200 MiB target reads the shipped daemon above); ${memoryNote(start)}` },
          { name: MEMORY_ROWS.startIdle, value: mib(startIdle.rss), unit: 'MiB', note: `the same daemon idle ${round1((2_500 + IDLE_SETTLE_MS) / 1000)} s more, what (b) compares with; ${memoryNote(startIdle)}` },
        );

        // In two halves, measured after each: growth that goes on in the second half is per session, not a one-off.
        const t0 = performance.now();
        let content = 0;
        const half = Math.floor(closedSessions / 2);
        const fillAndClose = async (i: number): Promise<void> => {
          const filled = await fillSession(d1.client, `c${i}`, closedMessages, closedBatch, closedBytes);
          content += filled.content;
          await d1.client.close(filled.sessionId);
        };
        await pool(half, concurrency, fillAndClose);
        await waitResident(d1, 0);
        await new Promise((resolve) => setTimeout(resolve, 2_500)); // as before the final measurement (below)
        const mid = await memoryOf(d1);
        await pool(closedSessions - half, concurrency, (i) => fillAndClose(half + i));
        const seconds = (performance.now() - t0) / 1000;
        const left = await waitResident(d1, 0);
        // Queued decision records are written after 50 ms idle, and an idle log hands its mapped file pages back
        // within two of its 1 s probes: let both happen before measuring.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        const soon = await memoryOf(d1);
        // V8 gives the heap space a burst grew back only once its allocation rate stays low for a while (its memory
        // reducer, a timer of its own, for the main thread and each worker): measure again once the daemon has been
        // idle that long. The figure 2.5 s after the last close is kept beside it.
        await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
        const after = await memoryOf(d1);
        const log = treeSize(join(d1.dir, 'events'));
        rows.push(
          { name: `(b) RSS after the first ${half} closed sessions`, value: mib(mid.rss), unit: 'MiB', note: memoryNote(mid) },
          {
            name: '(b) RSS 2.5 s after the last close',
            value: mib(soon.rss),
            unit: 'MiB',
            note: `${closedSessions} sessions × ${closedMessages} messages (${closedMessages / closedBatch} appends of ${closedBatch}, ~${closedBytes} B) opened and closed in ${round1(seconds)} s; ${left} still resident; ${memoryNote(soon)}`,
          },
          {
            name: MEMORY_ROWS.afterClosed,
            value: mib(after.rss),
            unit: 'MiB',
            note: `the same daemon ${round1((2_500 + IDLE_SETTLE_MS) / 1000)} s after the last close, idle meanwhile; ${memoryNote(after)}`,
          },
          {
            name: MEMORY_ROWS.afterClosedRatio,
            value: round2(after.rss / startIdle.rss),
            unit: '×',
            note: `both idle ${round1((2_500 + IDLE_SETTLE_MS) / 1000)} s; target ≤ 1.2; 2.5 s after the last close it was ${round2(soon.rss / start.rss)}× the start measured at once`,
          },
          {
            name: '(b) ratio to (a), anonymous RSS only',
            value: round2(after.rssAnon / startIdle.rssAnon),
            unit: '×',
            note: `without file-backed pages (the LMDB map: ${mib(after.logMapRss)} MiB); first half ${round2(mid.rssAnon / start.rssAnon)}× (at 2.5 s)`,
          },
          {
            name: '(b) RSS growth per session, second half',
            value: round2(((soon.rss - mid.rss) / (closedSessions - half)) / 1024),
            unit: 'KiB',
            note: `${mib(soon.rss - mid.rss)} MiB over the last ${closedSessions - half} sessions, both measured 2.5 s after their last close: what stays per closed session once the daemon has warmed up`,
          },
          { name: '(b) LMDB log size', value: mib(log.apparent), unit: 'MiB', note: `${mib(log.allocated)} MiB allocated; ${mib(content)} MiB of message text` },
        );
      } finally {
        await stopDaemon(d1);
      }

      // (c): a second daemon
      const d2 = await startDaemon(server.url, track);
      try {
        await warmHosts(d2);
        const start = await memoryOf(d2);
        const t0 = performance.now();
        let content = 0;
        await pool(residentSessions, concurrency, async (i) => {
          const filled = await fillSession(d2.client, `r${i}`, residentMessages, residentBatch, residentBytes);
          content += filled.content;
        });
        const seconds = (performance.now() - t0) / 1000;
        const resident = await waitResident(d2, residentSessions);
        await new Promise((resolve) => setTimeout(resolve, 500));
        const after = await memoryOf(d2);
        const log = treeSize(join(d2.dir, 'events'));
        const growth = after.rss - start.rss;
        rows.push(
          { name: '(c) RSS after start (second daemon)', value: mib(start.rss), unit: 'MiB', note: memoryNote(start) },
          {
            name: MEMORY_ROWS.resident,
            value: mib(after.rss),
            unit: 'MiB',
            note: `${resident} resident idle sessions × ${residentMessages} messages of ~${residentBytes} B (appends of ${residentBatch}), filled in ${round1(seconds)} s; target ≤ start + 1.5 × ${mib(content)} MiB = ${mib(start.rss + 1.5 * content)} MiB; ${memoryNote(after)}`,
          },
          { name: '(c) growth over start', value: mib(growth), unit: 'MiB', note: `${round1(growth / Math.max(1, resident) / 1024)} KiB per resident session` },
          { name: MEMORY_ROWS.residentBudget, value: round2(growth / content), unit: '×', note: `raw message bytes ${mib(content)} MiB; target ≤ 1.5` },
          {
            name: '(c) anonymous RSS growth / raw message bytes',
            value: round2((after.rssAnon - start.rssAnon) / content),
            unit: '×',
            note: `${mib(after.rssAnon - start.rssAnon)} MiB; without file-backed pages (the LMDB map: ${mib(after.logMapRss)} MiB)`,
          },
          { name: '(c) LMDB log size', value: mib(log.apparent), unit: 'MiB', note: `${mib(log.allocated)} MiB allocated; ${round2(log.apparent / content)}× the message text` },
        );
      } finally {
        await stopDaemon(d2);
      }
      return { title: 'Daemon resident memory (own process, pool 2, after a forced GC of every thread)', rows };
    });
  } finally {
    await server.stop();
  }
}

export function memoryTargets(section: BenchSection | undefined): SectionTarget[] {
  const find = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return [
    { label: 'memory: built daemon RSS after start (pool 2)', value: find(MEMORY_ROWS.startBuilt), unit: 'MiB', target: '≤ 200', pass: (v) => v <= 200 },
    { label: 'memory: RSS after 10k closed sessions vs start', value: find(MEMORY_ROWS.afterClosedRatio), unit: '×', target: '≤ 1.2', pass: (v) => v <= 1.2 },
    { label: 'memory: 1k resident sessions, growth / message bytes', value: find(MEMORY_ROWS.residentBudget), unit: '×', target: '≤ 1.5', pass: (v) => v <= 1.5 },
  ];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const envNumber = (name: string): number | undefined => {
    const raw = process.env[name];
    return raw === undefined || raw === '' ? undefined : Number(raw);
  };
  const closedSessions = envNumber('MEM_BENCH_CLOSED_SESSIONS');
  const residentSessions = envNumber('MEM_BENCH_RESIDENT_SESSIONS');
  const concurrency = envNumber('MEM_BENCH_CONCURRENCY');
  const started = performance.now();
  const section = await benchMemory({
    ...(closedSessions === undefined ? {} : { closedSessions }),
    ...(residentSessions === undefined ? {} : { residentSessions }),
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  printStandalone(section, (performance.now() - started) / 1000);
}
