/**
 * Gateway benchmark: what putting Baton's gateway (`BatonGateway`) between a coding agent and its model costs,
 * measured side by side with calling the same upstream directly, in the same run.
 *
 * Phases 1–3 use three processes: this one runs the gateway and the daemon it records into (in-process `MemoryBus`,
 * LMDB log, pool of 2 — what `baton up` runs in one process); `gateway-upstream-child.ts` runs the loopback OpenAI-compatible model
 * (agent replies, and the extractive writer for the daemon's writers); `gateway-agent-child.ts` runs the agents
 * (`fetch`, timed from the client's side). Calls through the gateway use a session prefix (`/s/<sid>/v1`) and carry
 * the agent's tools, so every one is recorded.
 *
 * 1. Latency: sessions round-robin; each call's body is sent through the gateway and directly, back to back, order
 *    alternating, streamed (SSE, usage asked for) or not, alternating. Time to first body byte and total, p50/p99,
 *    and the p50 overhead (gateway p50 − direct p50). The model has a large window (no writer runs). Then the same
 *    with calls the gateway only relays (no tools, so not recorded), and one agent at a time sending calls back to
 *    back on its session (blocks through the gateway and direct in turn), where a call waits in the gateway for the
 *    previous call of its session to be recorded.
 * 2. Throughput: non-streamed calls, many sessions, a fixed number of calls in flight; rounds alternate direct and
 *    gateway (ABBA order), each target on its own copy of the same conversations, after warm-up rounds of both (on
 *    sessions of their own) for 10 s and one round that opens the measured sessions (V8 compiles the hot code of the gateway, the daemon and its two workers for several seconds on the two
 *    cores; rounds measured sooner time that). Median requests/s and ratio. The same rounds run with calls without
 *    tools, which the gateway forwards without recording: that ratio is what relaying alone costs on these cores.
 * 3. Overflow rewrite: sessions on a 37 036-token window (usable 25 000) run through the gateway until the next call
 *    would reach the usable window; threshold writers (extractive loopback writer) commit checkpoints meanwhile, each
 *    call waiting for the writer the one before started (so no rung is left armed to start a writer on the overflowing
 *    call, whose rebuild would then wait for it; overflowing calls that did wait are counted). Once no writer runs,
 *    one call per session past the window: the gateway appends, asks the daemon for a rebuild
 *    (rendered from the checkpoint, no model call) and sends the rewritten request. Its total time minus the direct
 *    time of the request the upstream got (the rewritten one, sent straight after, its messages that were new to the
 *    loopback made new again so the loopback counts their tokens as it did the first time) is the rewrite's cost.
 * 4. The gateway alone (`gateway-alone-phase.ts`), once the in-process daemon has stopped: the daemon in a process of
 *    its own on a real nats-server, the gateway in this process over NATS, as `baton gateway` runs; its own agents
 *    process sends the same conversations. The rounds of phase 2 (this process's CPU per recorded call vs relayed is
 *    then the gateway's alone: the ≤ 2× target reads it) and the conversations with a 1 MB message. The 1 MB target
 *    stays on phase 1's row: `baton up`, the daemon in the gateway's process, is what a user starts first.
 *
 * No timed assertions: the figures are printed, `gatewayTargets` compares them to the issue's targets.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/gateway.bench.ts`
 * (env: GATEWAY_BENCH_OVERFLOW_SESSIONS, default 100; GATEWAY_BENCH_WARMUP_SECONDS, default 10).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { MemoryBus } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import type { BenchRow, BenchSection } from './bench-types.ts';
import type { TargetCheck } from './main.ts';
import { ask, median, printStandalone, processCpu, quantile, round1, round2, sortedOf, spawnBenchChild, withChildren } from './bench-process.ts';
import type { GatewayAgentConfig, LatencySample, SequentialSample } from './gateway-agent-child.ts';
import { ALONE_ROWS, gatewayAlonePhase } from './gateway-alone-phase.ts';
import { callRate, rateRatios, throughputPhase, type ThroughputFigures } from './gateway-throughput-phase.ts';
import type { GatewayUpstreamConfig } from './gateway-upstream-child.ts';
import { REWRITE_P99_ROW, SMALL_MODEL, SMALL_WINDOW, overflowPhase } from './gateway-overflow-phase.ts';
import { TimedBatonClient } from './timed-baton-client.ts';

export interface GatewayBenchOptions {
  /** Latency: sessions (round-robin) and measured rounds (one call per session each), after 2 warm-up rounds. */
  readonly latencySessions?: number;
  readonly latencyRounds?: number;
  /** Throughput: sessions, calls in flight, calls per session per round, measured rounds per target. */
  readonly throughputSessions?: number;
  readonly concurrency?: number;
  readonly callsPerSession?: number;
  readonly throughputRounds?: number;
  /** Throughput: seconds of warm-up rounds (direct and gateway in turn) before the measured ones (default 10). */
  readonly throughputWarmupSeconds?: number;
  /** Overflow: measured sessions (after 3 warm-up ones). */
  readonly overflowSessions?: number;
}

/** Model of the latency and throughput phases: a window so large no threshold is reached (no writer runs). */
const LARGE_MODEL = 'bench-large-window';
/** The tail a rebuild keeps, scaled to the small window. */
const TAIL = { minTokens: 1_500, maxTokens: 4_000, minTextMessages: 3 };
const LATENCY_WARMUP_ROUNDS = 2;
/** Back-to-back calls: blocks per session (half through the gateway) and calls per block. */
const SEQUENTIAL_BLOCKS = 8;
const SEQUENTIAL_CALLS = 8;
/** Size of each file the model reads in the latency and throughput conversations. */
const FILE_BYTES = 3_000;
/** The first file the model reads in the conversations with one huge message (a long log, a base64 screenshot). */
const BIG_FILE_BYTES = 1_048_576;
/**
 * Model of those conversations: a window so large that their 1 MB message (some 300 000 tokens) reaches no threshold
 * either, so no writer runs while they are timed — as in the other latency phases.
 */
const HUGE_MODEL = 'bench-huge-window';
/** Measured rounds of those conversations (4 sessions, one call pair each per round). */
const BIG_ROUNDS = 10;
const CONTEXT_WINDOWS = { [LARGE_MODEL]: 1_000_000, [HUGE_MODEL]: 20_000_000, [SMALL_MODEL]: SMALL_WINDOW };

/** Row names the targets read. */
export const GATEWAY_ROWS = {
  jsonOverhead: 'non-streamed: p50 overhead (total)',
  sseOverhead: 'streamed: p50 overhead (total)',
  backToBackOverhead: 'back to back on one session: p50 overhead',
  bigHistoryOverhead: 'gateway + in-process daemon: with a 1 MB message in the history: p50 overhead (total)',
  recordedCpuRatioInProcess: 'gateway + in-process daemon: process CPU per call, recorded / relayed only',
  throughputRatio: 'throughput ratio gateway/direct',
  rewriteP99: REWRITE_P99_ROW,
} as const;

const ms = (x: number): number => round2(x);



export async function benchGateway(options: GatewayBenchOptions = {}): Promise<BenchSection> {
  const latencySessions = options.latencySessions ?? 16;
  const latencyRounds = options.latencyRounds ?? 24;
  const tpSessions = options.throughputSessions ?? 64;
  const concurrency = options.concurrency ?? 16;
  const callsPerSession = options.callsPerSession ?? 6;
  const tpRounds = options.throughputRounds ?? 4;
  const tpWarmupSeconds = options.throughputWarmupSeconds ?? Number(process.env['GATEWAY_BENCH_WARMUP_SECONDS'] ?? 10);
  const overflowSessions = options.overflowSessions ?? Number(process.env['GATEWAY_BENCH_OVERFLOW_SESSIONS'] ?? 100);

  const loadStart = loadavg()[0] ?? Number.NaN;
  return await withChildren(async (track) => {
    const upstream = track(spawnBenchChild('./gateway-upstream-child.ts', { latencyMs: 0 } satisfies GatewayUpstreamConfig));
    const upstreamURL = String((await upstream.next('ready', 120_000))['baseURL']);
    const dataDir = await mkdtemp(join(tmpdir(), 'baton-gateway-bench-'));
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    const bus = new MemoryBus();
    const daemonTransport = bus.connect();
    const clientTransport = bus.connect();
    const daemon = BatonDaemon.start({
      transport: daemonTransport,
      log,
      dataDir,
      poolSize: 2,
      model: { baseURL: upstreamURL, apiKey: 'bench-writer-key', maxRetries: 0, timeoutMs: 60_000 },
      tail: TAIL,
    });
    const client = new TimedBatonClient(clientTransport, { timeoutMs: 120_000 });
    const gateway = await BatonGateway.start({ upstream: upstreamURL, client, contextWindows: CONTEXT_WINDOWS });
    const gatewayOrigin = gateway.baseURL.replace(/\/v1$/, '');
    const tpIds = Array.from({ length: tpSessions }, (_, i) => `tp-${i}`);
    const bigIds = Array.from({ length: 4 }, (_, i) => `big-${i}`);
    // Phases 1–3, the daemon in this process.
    const inProcess = async (): Promise<BenchRow[]> => {
      const agent = track(spawnBenchChild('./gateway-agent-child.ts', { gatewayOrigin, upstreamBaseURL: upstreamURL } satisfies GatewayAgentConfig));
      await agent.next('ready', 120_000);
      const rows: BenchRow[] = [];

      // ---- 1. latency, gateway and direct back to back (warm-up rounds first, not counted)
      const latency = async (sessions: readonly string[], rounds: number, tools: boolean, firstFileBytes = FILE_BYTES, model = LARGE_MODEL): Promise<{ samples: LatencySample[]; cpu: Cpu }> => {
        const command = { type: 'latency', sessions, model, fileBytes: FILE_BYTES, firstFileBytes, tools };
        await ask(agent, { ...command, rounds: LATENCY_WARMUP_ROUNDS });
        const before = cpuOf(process.pid);
        const { samples } = await ask<{ samples: LatencySample[] }>(agent, { ...command, rounds });
        return { samples, cpu: minus(cpuOf(process.pid), before) };
      };
      const latencyIds = Array.from({ length: latencySessions }, (_, i) => `lat-${i}`);
      const opsBefore = client.ops.length;
      const recorded = await latency(latencyIds, latencyRounds, true);
      const recordingAppends = sortedOf(client.since(opsBefore).filter((o) => o.op === 'append').map((o) => o.ms));
      const of = (samples: readonly LatencySample[], path: 'gateway' | 'direct', key: 'ttfb' | 'total', stream?: boolean): number[] =>
        sortedOf(samples.filter((s) => s.path === path && (stream === undefined || s.stream === stream)).map((s) => s[key]));
      for (const stream of [false, true]) {
        const label = stream ? 'streamed' : 'non-streamed';
        for (const key of ['ttfb', 'total'] as const) {
          const g = of(recorded.samples, 'gateway', key, stream);
          const d = of(recorded.samples, 'direct', key, stream);
          const what = key === 'ttfb' ? 'first byte' : 'total';
          rows.push({ name: `${label}: gateway ${what} p50`, value: ms(quantile(g, 0.5)), unit: 'ms', note: `p99 ${ms(quantile(g, 0.99))} ms; ${g.length} calls` });
          rows.push({ name: `${label}: direct ${what} p50`, value: ms(quantile(d, 0.5)), unit: 'ms', note: `p99 ${ms(quantile(d, 0.99))} ms` });
          rows.push({
            name: `${label}: p50 overhead (${what})`,
            value: ms(quantile(g, 0.5) - quantile(d, 0.5)),
            unit: 'ms',
            note: `gateway p50 / direct p50 ${round2(quantile(g, 0.5) / quantile(d, 0.5))}×; p99 difference ${ms(quantile(g, 0.99) - quantile(d, 0.99))} ms${key === 'total' ? '; target < 2 ms' : ''}`,
          });
        }
      }
      const recordedCalls = of(recorded.samples, 'gateway', 'total').length;
      rows.push({
        name: 'latency calls: request body median',
        value: round1(median(recorded.samples.map((s) => s.bodyBytes)) / 1024),
        unit: 'KB',
        note: `${latencySessions} sessions × ${latencyRounds} rounds (after ${LATENCY_WARMUP_ROUNDS} warm-up), one call pair at a time, order alternating; agents in their own process, loopback in another`,
      });
      rows.push({
        name: 'gateway + in-process daemon: process CPU per recorded call',
        value: ms(recorded.cpu.total / recordedCalls),
        unit: 'ms',
        note: `all threads (gateway, daemon, its pool, LMDB); main thread ${ms(recorded.cpu.main / recordedCalls)} ms`,
      });
      rows.push({
        name: 'recording append after each reply p50',
        value: ms(quantile(recordingAppends, 0.5)),
        unit: 'ms',
        note: `p99 ${ms(quantile(recordingAppends, 0.99))} ms; client.append to the daemon once the reply has been relayed (in an agent's time only when its next call on the session comes sooner)`,
      });
      // The same, with calls the gateway only relays (no tools: not recorded), to split the overhead.
      const relayed = await latency(
        latencyIds.slice(0, Math.max(2, latencySessions >> 1)).map((id) => `relay-${id}`),
        Math.max(2, latencyRounds >> 1),
        false,
      );
      const rg = of(relayed.samples, 'gateway', 'total');
      const rd = of(relayed.samples, 'direct', 'total');
      rows.push({
        name: 'relayed only (not recorded): p50 overhead (total)',
        value: ms(quantile(rg, 0.5) - quantile(rd, 0.5)),
        unit: 'ms',
        note: `calls without tools, streamed and not, ${rg.length} calls: gateway p50 ${ms(quantile(rg, 0.5))} ms, direct ${ms(quantile(rd, 0.5))} ms; gateway process CPU per call ${ms(relayed.cpu.total / rg.length)} ms`,
      });

      // Conversations whose first tool output is 1 MB (a long log, a screenshot in base64): every later call carries it.
      // Recorded calls, one call pair at a time; the warm-up rounds put the big message in the history first.
      const big = await latency(
        bigIds,
        BIG_ROUNDS,
        true,
        BIG_FILE_BYTES,
        HUGE_MODEL,
      );
      const bg = of(big.samples, 'gateway', 'total');
      const bd = of(big.samples, 'direct', 'total');
      rows.push({
        name: GATEWAY_ROWS.bigHistoryOverhead,
        value: ms(quantile(bg, 0.5) - quantile(bd, 0.5)),
        unit: 'ms',
        note: `recorded calls (no writer runs: a 20M-token window), streamed and not, bodies ${round1(median(big.samples.map((s) => s.bodyBytes)) / 1048576)} MB median, ${bg.length} calls: gateway p50 ${ms(quantile(bg, 0.5))} ms (p99 ${ms(quantile(bg, 0.99))}), direct ${ms(quantile(bd, 0.5))} ms (p99 ${ms(quantile(bd, 0.99))}); gateway process CPU per call ${ms(big.cpu.total / bg.length)} ms (gateway and daemon); target < 5 ms, read here: \`baton up\` (this shape) is what a user runs first, and the daemon's work competes with the gateway's for its event loop`,
      });

      // One agent at a time, calls back to back on its session: a call waits in the gateway until the previous call
      // of its session has been recorded.
      const sequentialIds = Array.from({ length: 4 }, (_, i) => `seq-${i}`);
      await ask(agent, { type: 'sequential', sessions: sequentialIds, blocks: 1, callsPerBlock: 4, model: LARGE_MODEL, fileBytes: FILE_BYTES });
      const { samples: sequential } = await ask<{ samples: SequentialSample[] }>(agent, {
        type: 'sequential',
        sessions: sequentialIds,
        blocks: SEQUENTIAL_BLOCKS,
        callsPerBlock: SEQUENTIAL_CALLS,
        model: LARGE_MODEL,
        fileBytes: FILE_BYTES,
      });
      const backToBack = (path: 'gateway' | 'direct'): number[] => sortedOf(sequential.filter((x) => x.path === path && x.position > 0).map((x) => x.total));
      const sg = backToBack('gateway');
      const sd = backToBack('direct');
      rows.push({
        name: GATEWAY_ROWS.backToBackOverhead,
        value: ms(quantile(sg, 0.5) - quantile(sd, 0.5)),
        unit: 'ms',
        note: `non-streamed, each call sent as soon as the previous reply is in (${sg.length} calls; first call of each block left out): gateway p50 ${ms(quantile(sg, 0.5))} ms (p99 ${ms(quantile(sg, 0.99))}), direct ${ms(quantile(sd, 0.5))} ms (p99 ${ms(quantile(sd, 0.99))})`,
      });

      // ---- 2. throughput, rounds alternating direct / gateway
      const tp = await throughputPhase({
        agent,
        pids: { self: process.pid, upstream: upstream.pid, agents: agent.pid },
        sessions: tpIds,
        callsPerSession,
        concurrency,
        rounds: tpRounds,
        warmupSeconds: tpWarmupSeconds,
        model: LARGE_MODEL,
        fileBytes: FILE_BYTES,
      });
      rows.push(...throughputRows(tp, { sessions: tpSessions, concurrency }));

      // ---- 3. overflow rewrite with an existing checkpoint
      rows.push(...(await overflowPhase({ agent, upstream, client, log, overflowSessions })));
      await agent.stop();
      return rows;
    };
    let rows: BenchRow[];
    try {
      rows = await inProcess();
    } finally {
      await gateway.close();
      await daemon.stop();
      await clientTransport.close();
      await daemonTransport.close();
      await log.close();
      await rm(dataDir, { recursive: true, force: true });
    }

    // ---- 4. the gateway alone, its daemon in a process of its own (once the in-process daemon has stopped)
    try {
      rows.push(
        ...(await gatewayAlonePhase({
          upstreamURL,
          upstreamPid: upstream.pid,
          track,
          contextWindows: CONTEXT_WINDOWS,
          tail: TAIL,
          throughput: { sessions: tpIds, callsPerSession, concurrency, rounds: tpRounds, warmupSeconds: tpWarmupSeconds, model: LARGE_MODEL, fileBytes: FILE_BYTES },
          big: { sessions: bigIds, warmupRounds: LATENCY_WARMUP_ROUNDS, rounds: BIG_ROUNDS, model: HUGE_MODEL, fileBytes: FILE_BYTES, firstFileBytes: BIG_FILE_BYTES },
        })),
      );
    } finally {
      await upstream.stop();
    }
    rows.push({
      name: 'load average (1 min) at the end',
      value: round2(loadavg()[0] ?? Number.NaN),
      unit: '',
      note: `${round2(loadStart)} at the start; ${cpus().length} cores shared by the agents, the loopback, the gateway process, the daemon and anything else running`,
    });
    return { title: 'Gateway: overhead vs calling the upstream directly (loopback model; daemon in-process as `baton up`, then in its own process as `baton gateway`)', rows };
  });
}

/** Rows of phase 2 with the daemon in the gateway's process. */
function throughputRows(tp: ThroughputFigures, shape: { sessions: number; concurrency: number }): BenchRow[] {
  const rows: BenchRow[] = [];
  const gRate = median(tp.recorded.map((r) => callRate(r.gateway)));
  const dRate = median(tp.recorded.map((r) => callRate(r.direct)));
  const recordedRatios = rateRatios(tp.recorded);
  const relayedRatios = rateRatios(tp.relayed);
  const rounds = tp.recorded.length;
  rows.push({
    name: 'throughput direct',
    value: Math.round(dRate),
    unit: 'req/s',
    note: `non-streamed; ${shape.concurrency} in flight over ${shape.sessions} sessions, ${tp.callsPerRound} calls per round; median of ${rounds} rounds after ${tp.warmupRounds} warm-up rounds (${round1(tp.warmupSeconds)} s); call p50 ${ms(median(tp.recorded.map((r) => r.direct.p50)))} ms`,
  });
  rows.push({
    name: 'throughput through the gateway (+ in-process daemon)',
    value: Math.round(gRate),
    unit: 'req/s',
    note: `every call recorded (one daemon append each); call p50 ${ms(median(tp.recorded.map((r) => r.gateway.p50)))} ms`,
  });
  rows.push({
    name: GATEWAY_ROWS.throughputRatio,
    value: round2(recordedRatios.median),
    unit: '×',
    note: `median of per-round ratios (${recordedRatios.each.map((x) => round2(x)).join(', ')}); target ≥ 0.8`,
  });
  rows.push({
    name: 'throughput ratio, relayed only (not recorded)',
    value: round2(relayedRatios.median),
    unit: '×',
    note: `the same calls without tools, which the gateway forwards without recording (gateway ${Math.round(median(tp.relayed.map((r) => callRate(r.gateway))))} req/s, direct ${Math.round(median(tp.relayed.map((r) => callRate(r.direct))))}; per round ${relayedRatios.each.map((x) => round2(x)).join(', ')}): what relaying alone costs on these cores`,
  });
  const calls = tp.callsPerRound * rounds;
  const perCall = (x: number | undefined): number => ms((x ?? Number.NaN) / calls);
  const { recorded, relayed } = tp.cpu;
  rows.push({
    name: 'CPU per call through the gateway: gateway + in-process daemon',
    value: perCall(recorded.gateway['self']),
    unit: 'ms',
    note: `the bench process: gateway, daemon, its pool, LMDB; loopback ${perCall(recorded.gateway['upstream'])} ms, agents ${perCall(recorded.gateway['agents'])} ms (all on ${cpus().length} cores)`,
  });
  rows.push({
    name: 'CPU per direct call: loopback',
    value: perCall(recorded.direct['upstream']),
    unit: 'ms',
    note: `agents ${perCall(recorded.direct['agents'])} ms, gateway process ${perCall(recorded.direct['self'])} ms (idle)`,
  });
  rows.push({
    name: 'CPU per relayed call: gateway + in-process daemon',
    value: perCall(relayed.gateway['self']),
    unit: 'ms',
    note: `loopback ${perCall(relayed.gateway['upstream'])} ms, agents ${perCall(relayed.gateway['agents'])} ms; direct: loopback ${perCall(relayed.direct['upstream'])} ms, agents ${perCall(relayed.direct['agents'])} ms`,
  });
  rows.push({
    name: GATEWAY_ROWS.recordedCpuRatioInProcess,
    value: round2((recorded.gateway['self'] ?? Number.NaN) / (relayed.gateway['self'] ?? Number.NaN)),
    unit: '×',
    note: "the same conversations through the same gateway in the same rounds, with the agent's tools (recorded: parsed, digested, appended to the in-process daemon, which folds and logs them) and without (relayed byte for byte); includes the daemon's work, so not the gateway's CPU alone (the ≤ 2× target reads the gateway-alone row below)",
  });
  return rows;
}

/** CPU time (ms) of a process, all threads and main thread; zeros where /proc cannot be read. */
function cpuOf(pid: number): Cpu {
  return processCpu(pid) ?? { total: 0, main: 0 };
}

interface Cpu {
  readonly total: number;
  readonly main: number;
}

function minus(a: Cpu, b: Cpu): Cpu {
  return { total: a.total - b.total, main: a.main - b.main };
}

/** The record types of a daemon session's stream. */
/** Target lines for `bench/main.ts`. */
export function gatewayTargets(section: BenchSection | undefined): TargetCheck[] {
  const value = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return [
    { label: 'gateway: p50 overhead, non-streamed', value: value(GATEWAY_ROWS.jsonOverhead), unit: 'ms', target: '< 2', pass: (v) => v < 2 },
    { label: 'gateway: p50 overhead, streamed', value: value(GATEWAY_ROWS.sseOverhead), unit: 'ms', target: '< 2', pass: (v) => v < 2 },
    { label: 'gateway: p50 overhead, back to back on a session', value: value(GATEWAY_ROWS.backToBackOverhead), unit: 'ms', target: '< 2', pass: (v) => v < 2 },
    { label: 'gateway: p50 overhead, 1 MB message in the history', value: value(GATEWAY_ROWS.bigHistoryOverhead), unit: 'ms', target: '< 5', pass: (v) => v < 5 },
    { label: 'gateway alone: CPU per recorded call vs relayed', value: value(ALONE_ROWS.recordedCpuRatio), unit: '×', target: '≤ 2', pass: (v) => v <= 2 },
    { label: 'gateway: throughput vs direct', value: value(GATEWAY_ROWS.throughputRatio), unit: '×', target: '≥ 0.8', pass: (v) => v >= 0.8 },
    { label: 'gateway: overflow rewrite p99', value: value(GATEWAY_ROWS.rewriteP99), unit: 'ms', target: '< 50', pass: (v) => v < 50 },
  ];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const section = await benchGateway();
  printStandalone(section, (performance.now() - started) / 1000);
}
