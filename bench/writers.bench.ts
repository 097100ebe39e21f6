/**
 * Writers benchmark: many sessions each driving two fork-mode checkpoint writers against the loopback model
 * (extractive mode, 50 ms latency), side by side at daemon pool sizes 1 and 2 in the same run (one after the other,
 * after a small warm-up). Each pool size gets its own `BatonDaemon` on an in-process `MemoryTransport`, its own
 * `LmdbEventLog` in a temporary directory and its own loopback model, which runs in a worker thread (see
 * `startLoopbackWorker`), so its simulated prefix cache and token memo start cold for both.
 *
 * Each session opens with the agent's system prompt, tools and `writer_tools` (fork mode), then appends a coding
 * conversation one turn at a time (user → read_file/bash call → a 3–5 KB TypeScript file or test output → answer,
 * ~100 ms between turns), its provider usage being the real o200k count of everything sent so far. The usage
 * crosses the first rung (writer 1) and the agent goes on; the turn crossing the second rung is sent once writer 1
 * settled (a rung crossed while a writer runs stays armed until the next append), so it starts writer 2. The session
 * is done when both writers settled (`writer.settled` events).
 *
 * Figures per pool size, over the window from the first `writer.started` to the last `writer.settled`: writers/s,
 * the CPU used (main thread, loopback thread, the rest of the process), the main thread's event-loop delay
 * (`monitorEventLoopDelay`, resolution 10 ms: a sample is the timer interval plus the delay, so an idle loop reads
 * ≈ 10 ms; the rows report the delay beyond the interval), and the second writer's cache hit rate as the loopback's simulated prefix cache reports it
 * (`writer.cache_perf`: cached / prompt tokens over the writer's calls; its first call, from the writer's log).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/writers.bench.ts` (env: WRITERS_BENCH_SESSIONS, default 200).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { BatonClient, MemoryBus } from '@baton/client';
import { BatonDaemon, LmdbEventLog, toProviderMessage } from '@baton/runtime';
import { type Message, type OpenRequest, type PublishedEvent } from '@baton/protocol';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, codingConversation, prng } from './coding-conversation.ts';
import { processCpuMs, startLoopbackWorker, threadCpuMs } from './loopback-worker.ts';
import { WriterRecords } from './writer-records.ts';

// ---------------------------------------------------------------------------------------------------------------
// the agent: the same shapes as the integration tests (MODEL: usable window 48 000, rungs 9 600 / 19 200 / …)

const SECOND_RUNG = 19_200;

/** Tail small enough that a ~10 000-token conversation leaves most of itself to the writer. */
const TAIL = { minTokens: 1_500, maxTokens: 4_000, minTextMessages: 3 };

/** Mean pause between an agent's turns (its own model call), jittered ± 50 %. */
const THINK_MS = 100;

interface PlannedSession {
  /** Appends, one per turn; writer 1 starts on the turn crossing the first rung, writer 2 on the last one. */
  readonly appends: Message[][];
  readonly tokens: number;
  readonly bytes: number;
}

/** A session whose usage crosses the first rung, then (on its last turn) the second. */
function planSession(seed: number): PlannedSession {
  const c = codingConversation({ seed, until: (usage) => usage >= SECOND_RUNG });
  return { appends: c.turns, tokens: c.tokens, bytes: c.bytes };
}

// ---------------------------------------------------------------------------------------------------------------
// one pool size

export interface PoolRun {
  readonly pool: number;
  readonly sessions: number;
  readonly writers: number;
  readonly succeeded: number;
  readonly seconds: number;
  readonly writersPerSecond: number;
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  /** Event-loop utilisation of the main thread over the same window (0–1). */
  readonly mainBusy: number;
  /** CPU used over the same window, in cores (Linux only, NaN elsewhere). */
  readonly cores: { readonly main: number; readonly loopback: number; readonly rest: number };
  /** Second writer of each session, from `writer.cache_perf`. */
  readonly secondRates: number[];
  readonly secondCached: number;
  /** Second writer's first model call: cached / prompt tokens. */
  readonly secondFirstCallRates: number[];
  readonly secondPrompt: number;
  readonly firstRates: number[];
  readonly forkWriters: number;
  readonly modelCalls: number;
  readonly tokensPerSession: number;
  readonly kibPerSession: number;
  readonly problems: string;
}

/** Sampling interval of the event-loop delay histogram; its samples include it. */
const ELD_RESOLUTION_MS = 10;

async function runPool(pool: number, sessions: number, seedBase: number, timeoutMs: number): Promise<PoolRun> {
  const plans = Array.from({ length: sessions }, (_, i) => planSession(seedBase + i));
  const loopback = await startLoopbackWorker({ mode: 'extractive', latencyMs: 50 });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-writers-bench-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const bus = new MemoryBus();
  // Writer failures and daemon warnings, by kind / message (reported in the row note).
  const problems = new Map<string, number>();
  const daemonTransport = bus.connect();
  const clientTransport = bus.connect();
  const daemon = BatonDaemon.start({
    transport: daemonTransport,
    log,
    dataDir,
    poolSize: pool,
    model: { baseURL: loopback.baseURL, apiKey: 'bench' },
    tail: TAIL,
    logger: (level, msg) => {
      if (level === 'warn' || level === 'error') problems.set(`${level}: ${msg}`, (problems.get(`${level}: ${msg}`) ?? 0) + 1);
    },
  });
  const client = new BatonClient(clientTransport, { timeoutMs: 120_000 });
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  try {
    const open: OpenRequest = { project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS };
    const ids = await Promise.all(plans.map(async () => (await client.open(open)).session_id));
    const writers = ids.map(() => new WriterRecords());
    let settledTotal = 0;
    let lastSettledAt = 0;
    let firstStartedAt = 0;
    let elu = performance.eventLoopUtilization();
    let cpuAtStart: { main: number | undefined; process: number; loopback: Promise<number | null> } | undefined;
    // Per session: a waiter per settlement count, fed by the session's event stream (subscribed before the first
    // append, so no event is missed).
    const waiters = ids.map(() => new Map<number, () => void>());
    ids.forEach((sid, i) => {
      const stream = client.events(sid);
      void (async () => {
        for await (const e of stream as AsyncIterable<PublishedEvent>) {
          const records = writers[i] as WriterRecords;
          records.note(e);
          if (e.type === 'writer.started') {
            if (firstStartedAt === 0) {
              // The measurement window opens with the first writer.
              firstStartedAt = performance.now();
              elu = performance.eventLoopUtilization();
              cpuAtStart = { main: threadCpuMs(), process: processCpuMs(), loopback: loopback.cpu() };
              eld.enable();
            }
          } else if (e.type === 'writer.settled') {
            settledTotal++;
            lastSettledAt = performance.now();
            waiters[i]?.get(records.settled)?.();
          }
        }
      })();
    });
    const deadline = performance.now() + timeoutMs;
    /** Resolves when session `i` has `n` settled writers (or at the deadline). */
    const settledWriters = (i: number, n: number): Promise<void> =>
      (writers[i]?.settled ?? 0) >= n
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
            waiters[i]?.set(n, () => {
              clearTimeout(timer);
              resolve();
            });
          });

    await Promise.all(
      plans.map(async (plan, i) => {
        const sid = ids[i] as string;
        const think = prng(i + 7);
        // The agent's own model call between turns, to the same (loopback) provider: it is what warms the provider's
        // prefix cache for the writer's fork-mode requests in real use. Then a think time (THINK_MS ± 50 %), so 200
        // agents are not in lock-step.
        const history: Message[] = [];
        const pause = async (batch: readonly Message[]): Promise<void> => {
          history.push(...batch);
          await loopback.agentCall({ model: MODEL.id, messages: [{ role: 'system', content: SYSTEM_PROMPT }, ...history.map(toProviderMessage)], tools: AGENT_TOOLS });
          await new Promise((resolve) => setTimeout(resolve, THINK_MS / 2 + think(THINK_MS)));
        };
        // Writer 1 starts on the turn crossing the first rung; the agent keeps working while it runs. A rung crossed
        // while a writer runs stays armed until an append after its settlement, so the turn that crosses the second
        // rung is sent once writer 1 settled.
        const last = plan.appends.length - 1;
        for (const batch of plan.appends.slice(0, last)) {
          await client.append(sid, batch);
          await pause(batch);
        }
        await settledWriters(i, 1);
        await client.append(sid, plan.appends[last] as Message[]);
        await settledWriters(i, 2);
      }),
    );
    eld.disable();
    const mainBusy = performance.eventLoopUtilization(elu).utilization;
    const windowMs = (lastSettledAt > 0 ? lastSettledAt : performance.now()) - firstStartedAt;
    // CPU used over the window, in cores: the main thread, the loopback's thread, and the rest of the process (the
    // pool's workers, GC and I/O threads).
    const cores = { main: Number.NaN, loopback: Number.NaN, rest: Number.NaN };
    if (cpuAtStart !== undefined && windowMs > 0) {
      const [mainEnd, processEnd, loopEnd, loopStart] = [threadCpuMs(), processCpuMs(), await loopback.cpu(), await cpuAtStart.loopback];
      const main = mainEnd !== undefined && cpuAtStart.main !== undefined ? mainEnd - cpuAtStart.main : Number.NaN;
      const loop = loopEnd !== null && loopStart !== null ? loopEnd - loopStart : Number.NaN;
      cores.main = main / windowMs;
      cores.loopback = loop / windowMs;
      cores.rest = (processEnd - cpuAtStart.process - main - loop) / windowMs;
    }
    const ordered = writers.map((records) => records.list);
    // Why writers did not succeed, from their own logs (the last `*failed` record; paths and hashes shortened).
    const shorten = (text: string): string =>
      text
        .replace(/'?\/[^\s']+'?/g, (path) => {
          const area = /\/(history|staging|memory)\//.exec(path)?.[1];
          return area === undefined ? '…' : `…/${area}/…`;
        })
        .slice(0, 100);
    for (const w of ordered.flat()) {
      if (w.outcome === 'success') continue;
      const failed = [...log.read(`writer/${w.writerId}`)].reverse().find((r) => r.type.endsWith('failed'));
      const payload = failed?.payload as { message?: unknown; reason?: unknown } | undefined;
      const detail = payload?.message ?? payload?.reason ?? '';
      const message = typeof detail === 'string' ? detail : JSON.stringify(detail);
      const key = `${w.outcome ?? 'unsettled'}${failed !== undefined ? ` at ${failed.type}: ${shorten(message)}` : ''}`;
      problems.set(key, (problems.get(key) ?? 0) + 1);
    }
    // The second writer's first model call, from its own log (`model.replied` usage): the request that shares the
    // first writer's prefix up to that writer's boundary and adds the turns since.
    const secondFirstCallRates = ordered.flatMap((list) => {
      const w = list[1];
      if (w === undefined) return [];
      const replied = [...log.read(`writer/${w.writerId}`)].find((r) => r.type === 'model.replied');
      const usage = (replied?.payload as { usage?: { prompt: number; cached: number } } | undefined)?.usage;
      return usage !== undefined && usage.prompt > 0 ? [usage.cached / usage.prompt] : [];
    });
    const all = ordered.flat();
    const second = ordered.flatMap((list) => (list[1] !== undefined ? [list[1]] : []));
    const first = ordered.flatMap((list) => (list[0] !== undefined ? [list[0]] : []));
    return {
      pool,
      sessions,
      writers: settledTotal,
      succeeded: all.filter((w) => w.outcome === 'success').length,
      seconds: windowMs / 1000,
      writersPerSecond: settledTotal / (windowMs / 1000),
      // A sample is the timer interval plus the delay (an idle loop reads ~10 ms): the delay is what is above it.
      eldP50Ms: Math.max(0, eld.percentile(50) / 1e6 - ELD_RESOLUTION_MS),
      eldP99Ms: Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS),
      eldMaxMs: Math.max(0, eld.max / 1e6 - ELD_RESOLUTION_MS),
      mainBusy,
      cores,
      secondRates: second.flatMap((w) => (w.hitRate !== null ? [w.hitRate] : [])),
      secondCached: second.reduce((s, w) => s + w.cached, 0),
      secondPrompt: second.reduce((s, w) => s + w.prompt, 0),
      firstRates: first.flatMap((w) => (w.hitRate !== null ? [w.hitRate] : [])),
      forkWriters: all.filter((w) => w.mode === 'fork').length,
      modelCalls: (await loopback.stats()).calls,
      secondFirstCallRates,
      tokensPerSession: plans.reduce((s, p) => s + p.tokens, 0) / plans.length,
      kibPerSession: plans.reduce((s, p) => s + p.bytes, 0) / plans.length / 1024,
      problems: [...problems].map(([k, n]) => `${n}× ${k}`).join('; '),
    };
  } finally {
    eld.disable();
    await daemon.stop();
    await clientTransport.close();
    await daemonTransport.close();
    await log.close();
    await loopback.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// section

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Row names the targets read. */
export const WRITERS_ROWS = {
  rate: (pool: number) => `writers/s, pool ${pool}`,
  ratio: 'writers/s pool 2 / pool 1',
  eldP99: (pool: number) => `main event-loop delay p99, pool ${pool}`,
  hitRate: (pool: number) => `2nd writer cache hit rate (median), pool ${pool}`,
} as const;

export interface WritersBenchOptions {
  /** Sessions per pool size (default WRITERS_BENCH_SESSIONS or 200). */
  readonly sessions?: number;
  /** Per-session deadline for both writers to settle (default 100 s). */
  readonly timeoutMs?: number;
}

export async function benchWriters(options: WritersBenchOptions = {}): Promise<BenchSection> {
  const sessions = Math.max(1, Math.floor(options.sessions ?? Number(process.env['WRITERS_BENCH_SESSIONS'] ?? 200)) || 200);
  const timeoutMs = options.timeoutMs ?? 100_000;
  // Warm-up: loads the tokenizer, the SDK and the worker code paths once, so pool 1 does not pay for them alone.
  await runPool(1, 4, 900_000, 30_000);
  const runs: PoolRun[] = [];
  for (const pool of [1, 2]) runs.push(await runPool(pool, sessions, pool * 10_000, timeoutMs));
  const rows: BenchRow[] = [];
  const [one, two] = runs as [PoolRun, PoolRun];
  rows.push({
    name: 'conversation per session',
    value: round(one.tokensPerSession, 0),
    unit: 'tokens',
    note: `${round(one.kibPerSession, 1)} KiB of text, ${sessions} sessions × 2 writers per pool size, loopback latency 50 ms`,
  });
  for (const r of runs) {
    const missing = r.sessions * 2 - r.writers;
    rows.push({
      name: WRITERS_ROWS.rate(r.pool),
      value: round(r.writersPerSecond),
      unit: 'writers/s',
      note:
        `${r.writers} writers (${r.succeeded} success, ${r.forkWriters} fork) in ${round(r.seconds, 1)} s, ${r.modelCalls} model calls; ` +
        `CPU cores used: main ${round(r.cores.main)}, loopback ${round(r.cores.loopback)}, pool + other threads ${round(r.cores.rest)}` +
        `${missing > 0 ? `; ${missing} did not settle in time` : ''}${r.problems !== '' ? `; ${r.problems}` : ''}`,
    });
  }
  rows.push({ name: WRITERS_ROWS.ratio, value: round(two.writersPerSecond / one.writersPerSecond), unit: '×', note: 'the pool shares the cores with the main thread, the loopback server and anything else running' });
  for (const r of runs) {
    rows.push({ name: WRITERS_ROWS.eldP99(r.pool), value: round(r.eldP99Ms), unit: 'ms', note: `p50 ${round(r.eldP50Ms)}, max ${round(r.eldMaxMs)} ms (delay beyond the ${ELD_RESOLUTION_MS} ms sampling interval); main loop busy ${Math.round(r.mainBusy * 100)} %, main thread CPU ${Math.round(r.cores.main * 100)} %` });
  }
  for (const r of runs) {
    rows.push({
      name: WRITERS_ROWS.hitRate(r.pool),
      value: round(median(r.secondRates), 3),
      unit: 'ratio',
      note: `${r.secondRates.length} writers, pooled ${round(r.secondCached / Math.max(1, r.secondPrompt), 3)}; its 1st call ${round(median(r.secondFirstCallRates), 3)}; 1st writers ${round(median(r.firstRates), 3)}`,
    });
  }
  return { title: `Checkpoint writers (${sessions} sessions per pool size, fork mode, loopback model)`, rows };
}

/** Target lines for `bench/main.ts`. */
export function writersTargets(section: BenchSection | undefined): {
  label: string;
  value: number | undefined;
  unit: string;
  target: string;
  pass: (value: number) => boolean;
}[] {
  const value = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return [1, 2].flatMap((pool) => [
    { label: `writers: main event-loop delay p99, pool ${pool}`, value: value(WRITERS_ROWS.eldP99(pool)), unit: 'ms', target: '< 20', pass: (v: number) => v < 20 },
    { label: `writers: 2nd writer cache hit rate, pool ${pool}`, value: value(WRITERS_ROWS.hitRate(pool)), unit: 'ratio', target: '≥ 0.9', pass: (v: number) => v >= 0.9 },
  ]);
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const section = await benchWriters();
  console.log(section.title);
  for (const row of section.rows) console.log(`  ${row.name.padEnd(52)} ${String(row.value).padStart(10)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  console.log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
