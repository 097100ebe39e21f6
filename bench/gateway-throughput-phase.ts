/**
 * Phase 2 of the gateway bench (see `gateway.bench.ts`): throughput, non-streamed calls, many sessions, a fixed number
 * of calls in flight; rounds alternate direct and gateway (ABBA order), each target on its own copy of the same
 * conversations, after warm-up rounds of both (on sessions of their own) and one round that opens the measured
 * sessions. The same rounds run with calls without tools, which the gateway forwards without recording. The CPU time
 * of each process involved is summed over the measured rounds, per target and kind of call.
 *
 * Run once per configuration of the gateway (its daemon in the same process, or in a process of its own): the agent
 * child given here sends its calls to the gateway it was started with.
 */
import { performance } from 'node:perf_hooks';
import { ask, median, processCpu, type BenchChild } from './bench-process.ts';
import type { ThroughputResult } from './gateway-agent-child.ts';

export interface ThroughputPhase {
  readonly agent: BenchChild;
  /** Processes whose CPU time is summed: `name → pid` (e.g. the gateway's, the loopback's, the agents'). */
  readonly pids: Readonly<Record<string, number>>;
  readonly sessions: readonly string[];
  readonly callsPerSession: number;
  readonly concurrency: number;
  /** Measured rounds per target and kind. */
  readonly rounds: number;
  /** Warm-up rounds (both targets, both kinds, in turn) run for this long at least. */
  readonly warmupSeconds: number;
  readonly model: string;
  readonly fileBytes: number;
}

/** Recorded: calls with the agent's tools (the gateway records them); relayed: without (the gateway only relays). */
export type CallKind = 'recorded' | 'relayed';
export type Target = 'gateway' | 'direct';
export interface RoundPair {
  readonly gateway: ThroughputResult;
  readonly direct: ThroughputResult;
}

export interface ThroughputFigures {
  readonly recorded: readonly RoundPair[];
  readonly relayed: readonly RoundPair[];
  readonly warmupRounds: number;
  readonly warmupSeconds: number;
  /** Calls per measured round (every round of every target and kind makes as many). */
  readonly callsPerRound: number;
  /** CPU time (ms, all threads) of each process of `pids` over the measured rounds, per kind and target. */
  readonly cpu: Readonly<Record<CallKind, Readonly<Record<Target, Readonly<Record<string, number>>>>>>;
}

export const callRate = (r: ThroughputResult): number => r.requests / r.seconds;

export async function throughputPhase(phase: ThroughputPhase): Promise<ThroughputFigures> {
  const { agent, pids, sessions, callsPerSession, concurrency, rounds, model, fileBytes } = phase;
  const names = Object.keys(pids);
  const zero = (): Record<string, number> => Object.fromEntries(names.map((n) => [n, 0]));
  const cpu = { recorded: { gateway: zero(), direct: zero() }, relayed: { gateway: zero(), direct: zero() } };
  const cpuNow = (): number[] => names.map((n) => processCpu(pids[n] as number)?.total ?? 0);
  let measuring = false;
  const round = async (target: Target, kind: CallKind, ids: readonly string[]): Promise<ThroughputResult> => {
    const before = cpuNow();
    const tools = kind === 'recorded';
    const result = await ask<ThroughputResult>(agent, { type: 'throughput', target, sessions: ids, callsPerSession, concurrency, model, fileBytes, tools });
    if (measuring) {
      const after = cpuNow();
      const sums = cpu[kind][target];
      names.forEach((n, i) => (sums[n] = (sums[n] ?? 0) + (after[i] ?? 0) - (before[i] ?? 0)));
    }
    return result;
  };
  // A pair of rounds, direct and through the gateway: ABBA, direct first in rounds 0 and 3, gateway first in 1 and 2.
  const pair = async (r: number, kind: CallKind, ids: readonly string[] = sessions): Promise<RoundPair> => {
    const directFirst = r % 4 === 0 || r % 4 === 3;
    const first = await round(directFirst ? 'direct' : 'gateway', kind, ids);
    const second = await round(directFirst ? 'gateway' : 'direct', kind, ids);
    return directFirst ? { direct: first, gateway: second } : { gateway: first, direct: second };
  };
  // Warm-up rounds: both paths, in turn, for `warmupSeconds` at least, so the measured rounds do not time V8 still
  // compiling the hot code of the gateway (and of the daemon and its pool, where they share its process). On sessions
  // of their own, so the measured conversations start as long as they would without a warm-up; then one round opens
  // the measured sessions.
  const warmupIds = sessions.map((id) => `${id}-warm-up`);
  const warmupStart = performance.now();
  let warmupRounds = 0;
  do {
    await pair(warmupRounds, 'recorded', warmupIds);
    await pair(warmupRounds, 'relayed', warmupIds);
    warmupRounds++;
  } while (performance.now() - warmupStart < phase.warmupSeconds * 1000);
  await pair(0, 'recorded');
  await pair(0, 'relayed');
  const warmupSeconds = (performance.now() - warmupStart) / 1000;
  measuring = true;
  const recorded: RoundPair[] = [];
  const relayed: RoundPair[] = [];
  for (let r = 0; r < rounds; r++) {
    // The two kinds take turns going first too.
    if (r % 2 === 0) {
      recorded.push(await pair(r, 'recorded'));
      relayed.push(await pair(r, 'relayed'));
    } else {
      relayed.push(await pair(r, 'relayed'));
      recorded.push(await pair(r, 'recorded'));
    }
  }
  return { recorded, relayed, warmupRounds, warmupSeconds, callsPerRound: recorded[0]?.gateway.requests ?? 0, cpu };
}

/** Median of the per-round ratios gateway / direct of `pairs`, and the ratios. */
export function rateRatios(pairs: readonly RoundPair[]): { median: number; each: number[] } {
  const each = pairs.map((p) => callRate(p.gateway) / callRate(p.direct));
  return { median: median(each), each };
}
