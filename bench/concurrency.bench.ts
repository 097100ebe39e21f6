/**
 * Concurrency benchmark: 100 sessions appending single ~1.5 KB chat messages (one message per request, the next as
 * soon as the reply is back) against Baton and against a FLOOR service, side by side.
 *
 * - Baton: a daemon in its own process (`daemon-child.ts`: own NATS connection, pool 2, LMDB log; sessions opened
 *   with checkpoints disabled, so no writer runs).
 * - Floor: `floor-child.ts`, in its own process: a bare NATS subscriber on the same subjects that msgpack-decodes the
 *   request, puts it into LMDB (one synced lmdb-js transaction per event-loop turn) and replies after the commit.
 * - The load: `concurrency-load-child.ts`, a third process with the real `BatonClient`, so the client side costs the
 *   same against both.
 *
 * One service runs at a time (never both), on a fresh data directory, against one nats-server started for the
 * section. Rounds alternate the two and flip their order each round (floor, Baton | Baton, floor | …); each figure is
 * the median over rounds, each ratio the median of the per-round ratios. Targets (from the issue): throughput
 * ≥ 0.5× the floor's, p99 ≤ 3× the floor's p99.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/concurrency.bench.ts`
 * (env: CONC_BENCH_ROUNDS, CONC_BENCH_SESSIONS, CONC_BENCH_PER_SESSION, CONC_BENCH_WARMUP_SECONDS; CONC_BENCH_NODE_ARGS: node flags, space-separated,
 * for both services alike, e.g. `--max-semi-space-size=32`, to try V8 settings). With CONC_BENCH_CPU_PROF=<dir> (opt-in,
 * slows both services down) the floor and the daemon run with `--cpu-prof` and the daemon's worker threads too: one
 * `.cpuprofile` per thread and run under `<dir>/<kind>-<round>/`, written when the service stops (open them in Chrome
 * DevTools or read their self times).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { startNatsServer } from '@baton/testing';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { median, printStandalone, processCpu, round1, round2, spawnBenchChild, withChildren, type BenchChild, type SectionTarget } from './bench-process.ts';
import type { LoadChildConfig, LoadResult } from './concurrency-load-child.ts';
import type { DaemonChildConfig } from './daemon-child.ts';
import type { FloorChildConfig } from './floor-child.ts';

export interface ConcurrencyBenchOptions {
  /** Rounds of one floor run and one Baton run (default 4, at least 3 for the issue). */
  readonly rounds?: number;
  /** Concurrent sessions (default 100). */
  readonly sessions?: number;
  /** Measured appends per session and run (default 200). */
  readonly perSession?: number;
  /**
   * Seconds of the same load before each measured run (default 10). The daemon runs three V8 isolates (main thread
   * and two actor hosts) whose hot code TurboFan compiles on the same two cores for several seconds: measured any
   * sooner, a run times that start-up compilation, not the service. The warm-up's own throughput is reported too.
   */
  readonly warmupSeconds?: number;
  /** Message content characters (default 1400: a ~1.5 KB msgpack request). */
  readonly contentBytes?: number;
  /** Profile every thread of both services into `<cpuProfDir>/<kind>-<round>/` (see above). */
  readonly cpuProfDir?: string;
}

/** Row names that the targets read (keep them stable). */
export const CONCURRENCY_ROWS = {
  throughputRatio: 'throughput ratio Baton/floor',
  p99Ratio: 'p99 ratio Baton/floor',
} as const;

type Kind = 'floor' | 'baton';

interface Run extends LoadResult {
  readonly kind: Kind;
  readonly round: number;
  /** CPU time of the service process per append during the measured run (µs; NaN when unreadable): all threads and the main thread. */
  readonly cpuPerAppend: number;
  readonly mainCpuPerAppend: number;
}

async function runOnce(kind: Kind, round: number, natsUrl: string, load: Omit<LoadChildConfig, 'natsUrl'>, track: (c: BenchChild) => BenchChild, cpuProfDir?: string): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), `baton-conc-${kind}-`));
  const profDir = cpuProfDir === undefined ? undefined : resolve(cpuProfDir, `${kind}-${round + 1}`);
  const nodeArgs = [...(process.env.CONC_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...(profDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profDir}`])];
  if (profDir !== undefined) await mkdir(profDir, { recursive: true });
  try {
    const service =
      kind === 'baton'
        ? track(spawnBenchChild('./daemon-child.ts', { natsUrl, dataDir: dir, poolSize: 2, ...(profDir === undefined ? {} : { workerCpuProfDir: profDir }) } satisfies DaemonChildConfig, { nodeArgs }))
        : track(spawnBenchChild('./floor-child.ts', { natsUrl, dataDir: dir } satisfies FloorChildConfig, { nodeArgs }));
    try {
      await service.next('ready', 120_000);
      const loader = track(spawnBenchChild('./concurrency-load-child.ts', { natsUrl, ...load } satisfies LoadChildConfig));
      await loader.next('start', 600_000);
      const cpu0 = processCpu(service.pid);
      const threads0 = profDir === undefined ? undefined : threadCpu(service.pid);
      const from = process.hrtime.bigint();
      const result = (await loader.next('result', 600_000)) as unknown as LoadResult;
      const cpu1 = processCpu(service.pid);
      // The measured window on the monotonic clock the profiles' timestamps use (µs), to read the profiles over it.
      if (profDir !== undefined) {
        const threads1 = threadCpu(service.pid);
        // CPU ms of each thread during the window, by thread id (the main thread's is the process id).
        const threads = Object.fromEntries([...threads1].map(([tid, ms]) => [tid, ms - (threads0?.get(tid) ?? 0)]));
        await writeFile(join(profDir, 'window.json'), JSON.stringify({ from: Number(from / 1000n), to: Number(process.hrtime.bigint() / 1000n), appends: result.appends, pid: service.pid, threads }));
      }
      await loader.exited;
      const per = (pick: (c: { total: number; main: number }) => number): number =>
        cpu0 === undefined || cpu1 === undefined ? Number.NaN : ((pick(cpu1) - pick(cpu0)) * 1000) / result.appends;
      return { ...result, kind, round, cpuPerAppend: per((c) => c.total), mainCpuPerAppend: per((c) => c.main) };
    } finally {
      await service.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** CPU time of every thread of `pid` (ms, by thread id; Linux /proc, empty elsewhere). */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime (stat(5) fields 14 and 15), in clock ticks of 10 ms.
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * 10);
    }
  } catch {
    // a thread that ended between the listing and its read, or no /proc: what was read is kept
  }
  return out;
}

export async function benchConcurrency(options: ConcurrencyBenchOptions = {}): Promise<BenchSection> {
  const rounds = Math.max(1, options.rounds ?? 4);
  const load: Omit<LoadChildConfig, 'natsUrl'> = {
    sessions: options.sessions ?? 100,
    perSession: options.perSession ?? 200,
    warmupSeconds: options.warmupSeconds ?? 10,
    contentBytes: options.contentBytes ?? 1400,
  };
  const server = await startNatsServer();
  try {
    const runs = await withChildren(async (track) => {
      const out: Run[] = [];
      for (let r = 0; r < rounds; r++) {
        const order: Kind[] = r % 2 === 0 ? ['floor', 'baton'] : ['baton', 'floor'];
        for (const kind of order) out.push(await runOnce(kind, r, server.url, load, track, options.cpuProfDir));
      }
      return out;
    });
    return { title: `Concurrency: ${load.sessions} sessions appending 1 message per request, Baton vs floor (separate processes)`, rows: rowsOf(runs, rounds, load) };
  } finally {
    await server.stop();
  }
}

function rowsOf(runs: readonly Run[], rounds: number, load: Omit<LoadChildConfig, 'natsUrl'>): BenchRow[] {
  const of = (kind: Kind): Run[] => runs.filter((r) => r.kind === kind).sort((a, b) => a.round - b.round);
  const floor = of('floor');
  const baton = of('baton');
  const rows: BenchRow[] = [];
  for (let r = 0; r < rounds; r++) {
    const f = floor[r];
    const b = baton[r];
    if (f === undefined || b === undefined) continue;
    const order = r % 2 === 0 ? 'floor first' : 'Baton first';
    rows.push(
      { name: `round ${r + 1} floor throughput`, value: Math.round(f.throughput), unit: 'appends/s', note: `p50 ${round1(f.p50 / 1000)} ms, p99 ${round1(f.p99 / 1000)} ms, max ${round1(f.max / 1000)} ms; ${order}` },
      { name: `round ${r + 1} Baton throughput`, value: Math.round(b.throughput), unit: 'appends/s', note: `p50 ${round1(b.p50 / 1000)} ms, p99 ${round1(b.p99 / 1000)} ms, max ${round1(b.max / 1000)} ms; ratios: throughput ${round2(b.throughput / f.throughput)}×, p99 ${round2(b.p99 / f.p99)}×` },
    );
  }
  const med = (xs: Run[], pick: (r: Run) => number): number => median(xs.map(pick));
  const ratio = (pick: (r: Run) => number): number => median(baton.map((b, i) => pick(b) / pick(floor[i] as Run)));
  const appends = load.sessions * load.perSession;
  const requestBytes = Math.round(med(baton, (r) => r.requestBytes));
  rows.push(
    { name: 'floor throughput (median)', value: Math.round(med(floor, (r) => r.throughput)), unit: 'appends/s', note: `${rounds} runs of ${load.sessions} sessions × ${load.perSession} appends (${appends}) after ${load.warmupSeconds} s of warm-up, ${requestBytes} B msgpack requests` },
    { name: 'floor latency p50', value: round2(med(floor, (r) => r.p50) / 1000), unit: 'ms' },
    { name: 'floor latency p99', value: round2(med(floor, (r) => r.p99) / 1000), unit: 'ms' },
    { name: 'Baton throughput (median)', value: Math.round(med(baton, (r) => r.throughput)), unit: 'appends/s', note: 'daemon pool 2, LMDB log, checkpoints off' },
    { name: 'Baton latency p50', value: round2(med(baton, (r) => r.p50) / 1000), unit: 'ms' },
    { name: 'Baton latency p99', value: round2(med(baton, (r) => r.p99) / 1000), unit: 'ms' },
    { name: 'Baton latency p99.9', value: round2(med(baton, (r) => r.p999) / 1000), unit: 'ms' },
    { name: CONCURRENCY_ROWS.throughputRatio, value: round2(ratio((r) => r.throughput)), unit: '×', note: 'median of per-round ratios; target ≥ 0.5' },
    { name: 'p50 ratio Baton/floor', value: round2(ratio((r) => r.p50)), unit: '×' },
    {
      name: 'warm-up throughput ratio',
      value: round2(ratio((r) => r.warmupAppends / r.warmupSeconds)),
      unit: '×',
      note: `the ${load.warmupSeconds} s before each measured run, V8 still compiling (Baton ${Math.round(med(baton, (r) => r.warmupAppends / r.warmupSeconds))}/s, floor ${Math.round(med(floor, (r) => r.warmupAppends / r.warmupSeconds))}/s)`,
    },
    { name: CONCURRENCY_ROWS.p99Ratio, value: round2(ratio((r) => r.p99)), unit: '×', note: 'median of per-round ratios; target ≤ 3' },
    {
      name: 'floor CPU per append',
      value: round1(med(floor, (r) => r.cpuPerAppend)),
      unit: 'µs',
      note: `service process, all threads, during the measured run (main thread ${round1(med(floor, (r) => r.mainCpuPerAppend))} µs)`,
    },
    {
      name: 'Baton CPU per append',
      value: round1(med(baton, (r) => r.cpuPerAppend)),
      unit: 'µs',
      note: `daemon process, all threads (main thread ${round1(med(baton, (r) => r.mainCpuPerAppend))} µs; actor hosts, V8 GC helpers and lmdb-js the rest)`,
    },
    { name: '  CPU ratio Baton/floor', value: round2(ratio((r) => r.cpuPerAppend)), unit: '×', note: 'less sensitive to the machine load than throughput' },
  );
  return rows;
}

export function concurrencyTargets(section: BenchSection | undefined): SectionTarget[] {
  const find = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return [
    { label: 'concurrency: throughput vs floor (100 sessions)', value: find(CONCURRENCY_ROWS.throughputRatio), unit: '×', target: '≥ 0.5', pass: (v) => v >= 0.5 },
    { label: 'concurrency: p99 vs floor p99', value: find(CONCURRENCY_ROWS.p99Ratio), unit: '×', target: '≤ 3', pass: (v) => v <= 3 },
  ];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const envNumber = (name: string): number | undefined => {
    const raw = process.env[name];
    return raw === undefined || raw === '' ? undefined : Number(raw);
  };
  const rounds = envNumber('CONC_BENCH_ROUNDS');
  const sessions = envNumber('CONC_BENCH_SESSIONS');
  const perSession = envNumber('CONC_BENCH_PER_SESSION');
  const warmupSeconds = envNumber('CONC_BENCH_WARMUP_SECONDS');
  const cpuProfDir = process.env['CONC_BENCH_CPU_PROF'];
  const started = performance.now();
  const section = await benchConcurrency({
    ...(cpuProfDir === undefined || cpuProfDir === '' ? {} : { cpuProfDir }),
    ...(rounds === undefined ? {} : { rounds }),
    ...(sessions === undefined ? {} : { sessions }),
    ...(perSession === undefined ? {} : { perSession }),
    ...(warmupSeconds === undefined ? {} : { warmupSeconds }),
  });
  printStandalone(section, (performance.now() - started) / 1000);
}
