/**
 * Phase 4 of the gateway bench (see `gateway.bench.ts`): the gateway alone, as `baton gateway` runs it. The daemon
 * runs in a process of its own (`daemon-child.ts`) on a real `nats-server`; the gateway, in this process, reaches it
 * over NATS (`NatsTransport` + `BatonClient`, as the command does). So this process's CPU time is the gateway's only:
 * recording a call costs it what the gateway does (parse, digest, build the append, send it), not what the daemon does
 * with it (fold, log, LMDB), which the other phases count in the same process.
 *
 * Its own agents process, started on this gateway, sends the same conversations as the other phases (same session
 * ids, same bodies). Measured: the throughput rounds of phase 2 (CPU per recorded call vs relayed, and the rate vs
 * direct), then the conversations with a 1 MB message in the history, one call pair at a time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import { startNatsServer } from '@baton/testing';
import type { BenchRow } from './bench-types.ts';
import { ask, median, processCpu, quantile, round1, round2, sortedOf, spawnBenchChild, type BenchChild } from './bench-process.ts';
import type { DaemonChildConfig } from './daemon-child.ts';
import type { GatewayAgentConfig, LatencySample } from './gateway-agent-child.ts';
import { callRate, rateRatios, throughputPhase, type ThroughputPhase } from './gateway-throughput-phase.ts';

/** Row names the targets read. */
export const ALONE_ROWS = {
  recordedCpuRatio: 'gateway alone: CPU per call, recorded / relayed only',
  bigHistoryOverhead: 'gateway alone: with a 1 MB message in the history: p50 overhead (total)',
} as const;

export interface GatewayAlonePhase {
  readonly upstreamURL: string;
  readonly upstreamPid: number;
  readonly track: (child: BenchChild) => BenchChild;
  readonly contextWindows: Readonly<Record<string, number>>;
  readonly tail: NonNullable<DaemonChildConfig['tail']>;
  /** The throughput rounds, as phase 2 runs them (the agents and pids are this phase's own). */
  readonly throughput: Omit<ThroughputPhase, 'agent' | 'pids'>;
  /** The 1 MB-message conversations: sessions, warm-up and measured rounds, model, file sizes. */
  readonly big: { readonly sessions: readonly string[]; readonly warmupRounds: number; readonly rounds: number; readonly model: string; readonly fileBytes: number; readonly firstFileBytes: number };
}

const ms = (x: number): number => round2(x);

export async function gatewayAlonePhase(phase: GatewayAlonePhase): Promise<BenchRow[]> {
  const { upstreamURL, upstreamPid, track } = phase;
  const server = await startNatsServer();
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-gateway-alone-bench-'));
  let transport: NatsTransport | undefined;
  let gateway: BatonGateway | undefined;
  let daemon: BenchChild | undefined;
  try {
    daemon = track(
      spawnBenchChild('./daemon-child.ts', { natsUrl: server.url, dataDir, poolSize: 2, modelBaseURL: upstreamURL, tail: phase.tail } satisfies DaemonChildConfig),
    );
    await daemon.next('ready', 120_000);
    transport = await NatsTransport.connect({ servers: server.url, name: `bench-gateway-${process.pid}` });
    const client = new BatonClient(transport, { timeoutMs: 120_000 });
    gateway = await BatonGateway.start({ upstream: upstreamURL, client, contextWindows: phase.contextWindows });
    const gatewayOrigin = gateway.baseURL.replace(/\/v1$/, '');
    const agent = track(spawnBenchChild('./gateway-agent-child.ts', { gatewayOrigin, upstreamBaseURL: upstreamURL } satisfies GatewayAgentConfig));
    await agent.next('ready', 120_000);
    const rows: BenchRow[] = [];

    const pids = { gateway: process.pid, daemon: daemon.pid, nats: server.pid, upstream: upstreamPid, agents: agent.pid };
    const tp = await throughputPhase({ ...phase.throughput, agent, pids });
    const calls = tp.callsPerRound * tp.recorded.length;
    const perCall = (x: number | undefined): number => ms((x ?? Number.NaN) / calls);
    const { recorded, relayed } = tp.cpu;
    rows.push({
      name: 'gateway alone: throughput ratio gateway/direct',
      value: round2(rateRatios(tp.recorded).median),
      unit: '×',
      note: `every call recorded, the daemon in its own process over NATS (gateway ${Math.round(median(tp.recorded.map((r) => callRate(r.gateway))))} req/s, direct ${Math.round(median(tp.recorded.map((r) => callRate(r.direct))))}; per round ${rateRatios(tp.recorded).each.map((x) => round2(x)).join(', ')}); relayed only ${round2(rateRatios(tp.relayed).median)}×; after ${tp.warmupRounds} warm-up rounds (${round1(tp.warmupSeconds)} s)`,
    });
    rows.push({
      name: 'gateway alone: CPU per recorded call',
      value: perCall(recorded.gateway['gateway']),
      unit: 'ms',
      note: `the gateway's process only (the bench process: the gateway and its NATS client); daemon process ${perCall(recorded.gateway['daemon'])} ms, nats-server ${perCall(recorded.gateway['nats'])} ms, loopback ${perCall(recorded.gateway['upstream'])} ms, agents ${perCall(recorded.gateway['agents'])} ms`,
    });
    rows.push({
      name: 'gateway alone: CPU per relayed call',
      value: perCall(relayed.gateway['gateway']),
      unit: 'ms',
      note: `the same calls without tools (forwarded byte for byte, not recorded); daemon process ${perCall(relayed.gateway['daemon'])} ms, loopback ${perCall(relayed.gateway['upstream'])} ms, agents ${perCall(relayed.gateway['agents'])} ms`,
    });
    rows.push({
      name: ALONE_ROWS.recordedCpuRatio,
      value: round2((recorded.gateway['gateway'] ?? Number.NaN) / (relayed.gateway['gateway'] ?? Number.NaN)),
      unit: '×',
      note: `the gateway's CPU (what "gateway CPU" means: the daemon it records into runs in its own process here, as with \`baton gateway\`), same conversations, same rounds, with the agent's tools (recorded: parsed, owner-checked, digested, appended over NATS) and without (relayed byte for byte); ${calls} calls each; target ≤ 2×`,
    });

    // The conversations with a 1 MB message in the history, one call pair at a time, warm-up rounds first.
    const command = { type: 'latency', sessions: phase.big.sessions, model: phase.big.model, fileBytes: phase.big.fileBytes, firstFileBytes: phase.big.firstFileBytes, tools: true };
    await ask(agent, { ...command, rounds: phase.big.warmupRounds });
    const before = processCpu(process.pid)?.total ?? 0;
    const { samples } = await ask<{ samples: LatencySample[] }>(agent, { ...command, rounds: phase.big.rounds });
    const cpu = (processCpu(process.pid)?.total ?? 0) - before;
    const totals = (path: 'gateway' | 'direct'): number[] => sortedOf(samples.filter((s) => s.path === path).map((s) => s.total));
    const bg = totals('gateway');
    const bd = totals('direct');
    rows.push({
      name: ALONE_ROWS.bigHistoryOverhead,
      value: ms(quantile(bg, 0.5) - quantile(bd, 0.5)),
      unit: 'ms',
      note: `as the in-process row above, the daemon in its own process: bodies ${round1(median(samples.map((s) => s.bodyBytes)) / 1048576)} MB median, ${bg.length} calls: gateway p50 ${ms(quantile(bg, 0.5))} ms (p99 ${ms(quantile(bg, 0.99))}), direct ${ms(quantile(bd, 0.5))} ms (p99 ${ms(quantile(bd, 0.99))}); gateway process CPU per call ${ms(cpu / bg.length)} ms`,
    });
    return rows;
  } finally {
    await gateway?.close();
    await transport?.close();
    await daemon?.stop(60_000);
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
