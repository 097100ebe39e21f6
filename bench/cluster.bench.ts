/**
 * Cluster benchmark (issue 12): a 3-node NATS JetStream cluster (three nats-server processes, routes, R3 streams)
 * and Baton daemons in cluster mode, each in its own process (`test/fixtures/cluster-daemon-child.ts` through
 * `DaemonChild`: its own NATS connection, LMDB log and data directory). The load generator is this process, with the
 * real `BatonClient`. Everything runs on this one machine, so the nodes, the daemons and the load share its cores.
 *
 * 1. Append latency, durability `replicated` (acknowledged once LMDB and the R3 stream have the record) vs `local`
 *    (LMDB only): one daemon of each, on their own subject prefixes, both up the whole time but loaded one at a time,
 *    in alternating blocks whose order flips each round so the machine's noise hits both alike. Single ~1.5 KB
 *    messages, four sessions, once one request in flight (sequential) and once one per session (4 in flight).
 * 2. Takeover time: sessions opened while only the victim daemon runs, a standby started and given half a lease to
 *    watch the victim's heartbeats, then the victim is SIGKILLed with its sessions idle. Per session, the time from the
 *    kill to its first append answered (the client fails over: it reopens the session through the queue group, retrying
 *    while no daemon may claim it yet, and repeats the append). Checked: each of those sessions is then held by the
 *    standby. Five kills with a 3 s lease, one with the CLI's default 15 s lease. A kill's sessions all move at the
 *    moment the standby judges the victim stale, so the kills are the independent samples; the time is the lease,
 *    counted from the victim's last beat, plus the client's retry interval and the claim: the lease dominates it.
 * 3. Aggregate appends/s with 1, 2 and 3 daemon processes (replicated, R3): one set of daemons per count, all started
 *    first on their own prefixes, each with 30 sessions opened through the queue group (so spread over its daemons);
 *    the sets are loaded one at a time (one append in flight per session) in rounds whose order flips, and each figure
 *    is the median of the rounds' windows. CPU time of the nodes, the loaded daemons and the load generator is read
 *    from /proc over the same windows, with the machine's busy time, to show where the cores go and how much of them
 *    other work on the machine took.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/cluster.bench.ts` (env: BENCH_CLUSTER_PARTS=latency,takeover,
 * throughput to run some parts only; BENCH_CLUSTER_VERBOSE=1 prints each takeover sample and reopen on stderr).
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import type { Message } from '@baton/protocol';
import { startLoopbackModel, startNatsCluster, type LoopbackModel, type NatsClusterHandle } from '@baton/testing';
import { DaemonChild, type DaemonChildConfig } from '../test/support/cluster-rig.ts';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { nodeLossRows } from './cluster-node-loss.ts';
import { median, printStandalone, processCpu, quantile, round1, round2, type SectionTarget } from './bench-process.ts';

const MODEL = { id: 'gpt-4o', context_window: 200_000, max_output_tokens: 8_000 };
// Checkpoints off: no writer runs, so the figures are the append path alone.
const OPEN = { project_id: 'bench', model: MODEL, checkpoint: { enabled: false } } as const;

/** Lease of the takeover rounds that give the p50/p99 (short, so several rounds fit the section's time). */
const SHORT_LEASE_MS = 3_000;
/** `baton daemon --cluster` without `--lease-ms`. */
const CLI_DEFAULT_LEASE_MS = 15_000;
/** The takeover client's request timeout. */
const REQUEST_TIMEOUT_MS = 2_000;
/**
 * Client failover: first retry after 50 ms, doubling up to 200 ms; a try of `open` unanswered for 500 ms is joined by
 * more (a paused daemon holds what reaches it), an append unanswered for a second is given up on and repeated.
 */
const FAILOVER = { timeoutMs: 60_000, delayMs: 50, maxDelayMs: 200, openAttemptTimeoutMs: 500, attemptTimeoutMs: 1_000 } as const;
/** New sessions opened in each takeover round, before the victim is stopped and while it is paused (SIGSTOP rounds). */
const OPENS_PER_ROUND = 10;

/** Row names the targets read. */
export const CLUSTER_ROWS = {
  seqRatioP50: 'sequential: p50 ratio replicated/local',
  takeoverP99: 'takeover p99',
  takeoverServed: 'takeover: sessions served by the standby',
  stopTakeoverP99: 'takeover p99, SIGSTOP',
  pausedOpenP99: 'open p99 while a member is paused',
} as const;

// A realistic tool-output sized message: ~1.5 KB once msgpack-encoded in the request.
const FILLER = 'ran the order service tests again; two failures remain in the refund path (RefundPolicyTest.partialRefund, ' + 'x'.repeat(1_300);

function message(tag: string, i: number): Message {
  return { id: `${tag}-${i}`, role: 'user', content: `${tag} step ${i}: ${FILLER}` };
}

/** Each daemon connects to a different node first (like separate hosts would), the others as fallbacks. */
function serversFor(cluster: NatsClusterHandle, i: number): string[] {
  const urls = [...cluster.urls];
  return [...urls.slice(i % urls.length), ...urls.slice(0, i % urls.length)];
}

async function stopAll(children: readonly DaemonChild[]): Promise<void> {
  for (const c of children) {
    await c.stop();
    await rm(c.dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 1. append latency, replicated vs local

/** `count` appends, one in flight, rotating over the sessions; round-trip times in ms. */
async function sequential(client: BatonClient, sessions: readonly string[], tag: string, from: number, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const sid = sessions[i % sessions.length] as string;
    const t = performance.now();
    await client.append(sid, [message(tag, from + i)]);
    out.push(performance.now() - t);
  }
  return out;
}

/** Every session appends `perSession` times back to back, all sessions at once; round-trip times in ms. */
async function concurrent(client: BatonClient, sessions: readonly string[], tag: string, from: number, perSession: number): Promise<number[]> {
  const out: number[] = [];
  await Promise.all(
    sessions.map(async (sid, s) => {
      for (let i = 0; i < perSession; i++) {
        const t = performance.now();
        await client.append(sid, [message(`${tag}s${s}`, from + i)]);
        out.push(performance.now() - t);
      }
    }),
  );
  return out;
}

interface Mode {
  readonly name: 'local' | 'replicated';
  readonly client: BatonClient;
  readonly sessions: string[];
  readonly seq: number[];
  readonly conc: number[];
}

async function latencyRows(cluster: NatsClusterHandle, model: LoopbackModel, rows: BenchRow[]): Promise<void> {
  const SESSIONS = 4;
  const ROUNDS = 4;
  const SEQ_BLOCK = 100;
  const CONC_PER_SESSION = 40;
  const children: DaemonChild[] = [];
  const transport = await NatsTransport.connect({ servers: [...cluster.urls] });
  try {
    const modes: Mode[] = [];
    for (const [i, name] of (['local', 'replicated'] as const).entries()) {
      const prefix = `benchlat${name}`;
      children.push(await DaemonChild.spawn({ servers: serversFor(cluster, i), baseURL: model.baseURL, leaseMs: 5_000, durability: name, replicas: 3, prefix }));
      const client = new BatonClient(transport, { prefix, timeoutMs: 30_000 });
      const sessions: string[] = [];
      for (let s = 0; s < SESSIONS; s++) sessions.push((await client.open(OPEN)).session_id);
      modes.push({ name, client, sessions, seq: [], conc: [] });
    }
    // Warm-up: streams created, leaders elected, code paths compiled.
    for (const m of modes) await sequential(m.client, m.sessions, 'warm', 0, 40);
    let at = 100;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? modes : [...modes].reverse();
      for (const m of order) m.seq.push(...(await sequential(m.client, m.sessions, 'seq', at, SEQ_BLOCK)));
      at += SEQ_BLOCK;
      for (const m of [...order].reverse()) m.conc.push(...(await concurrent(m.client, m.sessions, 'conc', at, CONC_PER_SESSION)));
      at += CONC_PER_SESSION;
    }
    const [local, replicated] = modes as [Mode, Mode];
    for (const [label, pick, inFlight] of [
      ['sequential', (m: Mode) => m.seq, 1],
      ['concurrent', (m: Mode) => m.conc, SESSIONS],
    ] as const) {
      const l = [...pick(local)].sort((a, b) => a - b);
      const r = [...pick(replicated)].sort((a, b) => a - b);
      rows.push(
        { name: `${label}: append p50, local`, value: round2(quantile(l, 0.5)), unit: 'ms', note: `${l.length} appends of one ~1.5 KB message, ${SESSIONS} sessions, ${inFlight} in flight` },
        { name: `${label}: append p50, replicated (R3)`, value: round2(quantile(r, 0.5)), unit: 'ms', note: `${r.length} appends` },
        { name: `${label}: p50 ratio replicated/local`, value: round2(quantile(r, 0.5) / quantile(l, 0.5)), unit: '×' },
        { name: `${label}: append p99, local`, value: round2(quantile(l, 0.99)), unit: 'ms' },
        { name: `${label}: append p99, replicated (R3)`, value: round2(quantile(r, 0.99)), unit: 'ms' },
        { name: `${label}: p99 ratio replicated/local`, value: round2(quantile(r, 0.99) / quantile(l, 0.99)), unit: '×' },
      );
    }
  } finally {
    await transport.close();
    await stopAll(children);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 2. takeover after SIGKILL

interface TakeoverResult {
  readonly samples: number[];
  /** Per kill, the slowest of its sessions. */
  readonly perKill: number[];
  readonly served: number;
  /** Opens of new sessions with both daemons up, before the victim is stopped. */
  readonly opensBefore: number[];
  /** Opens of new sessions while the victim is paused (SIGSTOP rounds only). */
  readonly opensPaused: number[];
}

/** `OPENS_PER_ROUND` opens of new sessions one after the other; their times in ms. */
async function timedOpens(client: BatonClient): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < OPENS_PER_ROUND; i++) {
    const t = performance.now();
    await client.open(OPEN);
    out.push(performance.now() - t);
  }
  return out;
}

/**
 * `rounds` kills on their own prefix: each round opens `perRound` sessions on the daemon that is the only one up,
 * starts a standby, lets it watch at least one more heartbeat of the victim, kills the victim (SIGKILL) or pauses it
 * (SIGSTOP: it stays in the `open` queue group and holds what reaches it) and times each session's next append from
 * then. While a victim is paused, new sessions are opened too; the same number before, with both daemons up.
 */
async function takeover(cluster: NatsClusterHandle, model: LoopbackModel, prefix: string, leaseMs: number, rounds: number, perRound: number, signal: 'SIGKILL' | 'SIGSTOP' = 'SIGKILL'): Promise<TakeoverResult> {
  const config = (i: number): DaemonChildConfig => ({ servers: serversFor(cluster, i), baseURL: model.baseURL, leaseMs, durability: 'replicated', replicas: 3, prefix });
  const transport = await NatsTransport.connect({ servers: [...cluster.urls], maxReconnectAttempts: -1 });
  const verbose = process.env['BENCH_CLUSTER_VERBOSE'] === '1';
  const client = new BatonClient(transport, {
    prefix,
    // Short, as a failing-over client's should be: a request sent to the victim just before the cluster dropped its
    // subscription gets no answer and fails over only after this timeout.
    timeoutMs: REQUEST_TIMEOUT_MS,
    failover: {
      ...FAILOVER,
      // With BENCH_CLUSTER_VERBOSE=1: each reopen on stderr (what failed first, how many open attempts, how long).
      ...(verbose ? { onReopened: (e) => console.error(`  reopen ${e.sessionId.slice(0, 8)} after ${Math.round(e.waitedMs)} ms, ${e.attempts} attempts, cause ${String(e.cause)}`) } : {}),
    },
  });
  const children: DaemonChild[] = [];
  const samples: number[] = [];
  const perKill: number[] = [];
  const opensBefore: number[] = [];
  const opensPaused: number[] = [];
  let served = 0;
  try {
    children.push(await DaemonChild.spawn(config(0)));
    for (let round = 0; round < rounds; round++) {
      const victim = children.at(-1) as DaemonChild;
      const sessions: string[] = [];
      for (let i = 0; i < perRound; i++) {
        const sid = (await client.open(OPEN)).session_id;
        await client.append(sid, [message(`r${round}`, i)]);
        sessions.push(sid);
      }
      const standby = await DaemonChild.spawn(config(round + 1));
      children.push(standby);
      // A standby that has run for a while has seen the victim's newest beat some time before the kill (up to a third
      // of the lease): wait half a lease so this one is in that state, not counting the lease from its own start.
      await new Promise((r) => setTimeout(r, leaseMs / 2));
      if (signal === 'SIGSTOP') opensBefore.push(...(await timedOpens(client)));
      const killedAt = performance.now();
      if (signal === 'SIGKILL') await victim.kill();
      else victim.signal('SIGSTOP');
      await Promise.all([
        ...sessions.map(async (sid, i) => {
          await client.append(sid, [message(`r${round}-after`, i)]);
          samples.push(performance.now() - killedAt);
        }),
        ...(signal === 'SIGSTOP' ? [timedOpens(client).then((t) => opensPaused.push(...t))] : []),
      ]);
      // A paused victim is killed once measured (it would come back out of touch and drop its sessions).
      if (signal === 'SIGSTOP') await victim.kill();
      perKill.push(Math.max(...samples.slice(-perRound)));
      if (verbose) console.error(`  ${prefix} round ${round}: ${samples.slice(-perRound).map((x) => Math.round(x)).join(' ')}`);
      // The standby prints its "claimed" lines as it claims; give the pipe a moment to deliver the last ones.
      await new Promise((r) => setTimeout(r, 200));
      const held = standby.held();
      served += sessions.filter((sid) => held.has(sid)).length;
    }
  } finally {
    await transport.close();
    await stopAll(children);
  }
  return { samples, perKill, served, opensBefore, opensPaused };
}

async function takeoverRows(cluster: NatsClusterHandle, model: LoopbackModel, rows: BenchRow[]): Promise<void> {
  const ROUNDS = 5;
  const PER_ROUND = 10;
  const short = await takeover(cluster, model, 'benchto', SHORT_LEASE_MS, ROUNDS, PER_ROUND);
  const long = await takeover(cluster, model, 'benchtodef', CLI_DEFAULT_LEASE_MS, 1, PER_ROUND);
  const stopped = await takeover(cluster, model, 'benchtostop', SHORT_LEASE_MS, ROUNDS, PER_ROUND, 'SIGSTOP');
  const s = [...short.samples].sort((a, b) => a - b);
  const l = [...long.samples].sort((a, b) => a - b);
  const retry = `client failover retries ${FAILOVER.delayMs}→${FAILOVER.maxDelayMs} ms`;
  rows.push(
    { name: 'takeover p50', value: Math.round(quantile(s, 0.5)), unit: 'ms', note: `kill → first append answered by another daemon (sessions idle at the kill); lease ${SHORT_LEASE_MS} ms, ${s.length} sessions over ${ROUNDS} kills, ${retry}, request timeout ${REQUEST_TIMEOUT_MS} ms` },
    { name: CLUSTER_ROWS.takeoverP99, value: Math.round(quantile(s, 0.99)), unit: 'ms', note: `lease ${SHORT_LEASE_MS} ms` },
    {
      name: 'takeover per kill, median',
      value: Math.round(median(short.perKill)),
      unit: 'ms',
      note: `${short.perKill.map((x) => Math.round(x)).join(', ')} ms per kill, its slowest session (a kill's sessions move together: the kills are the independent samples)`,
    },
    { name: 'takeover p50 − lease', value: Math.round(quantile(s, 0.5) - SHORT_LEASE_MS), unit: 'ms', note: 'the lease runs from the victim\'s last beat, up to a third of a lease before the kill' },
    { name: 'takeover p50, CLI default lease', value: Math.round(quantile(l, 0.5)), unit: 'ms', note: `lease ${CLI_DEFAULT_LEASE_MS} ms (baton daemon --cluster default), ${l.length} sessions, 1 kill: the lease dominates` },
    { name: 'takeover p99, CLI default lease', value: Math.round(quantile(l, 0.99)), unit: 'ms' },
    {
      name: CLUSTER_ROWS.takeoverServed,
      value: short.served + long.served + stopped.served,
      unit: `of ${s.length + l.length + stopped.samples.length}`,
      note: 'held by the standby after its first append (from the standby\'s own "claimed" lines), SIGKILL and SIGSTOP rounds',
    },
  );
  const p = [...stopped.samples].sort((a, b) => a - b);
  const before = [...stopped.opensBefore].sort((a, b) => a - b);
  const paused = [...stopped.opensPaused].sort((a, b) => a - b);
  rows.push(
    { name: 'takeover p50, SIGSTOP', value: Math.round(quantile(p, 0.5)), unit: 'ms', note: `pause → first append answered by the standby (the victim stays in the open queue group); lease ${SHORT_LEASE_MS} ms, ${p.length} sessions over ${ROUNDS} pauses` },
    { name: CLUSTER_ROWS.stopTakeoverP99, value: Math.round(quantile(p, 0.99)), unit: 'ms', note: `lease ${SHORT_LEASE_MS} ms, append attempt ${FAILOVER.attemptTimeoutMs} ms, open tries every ${FAILOVER.openAttemptTimeoutMs} ms` },
    { name: 'open p50, both daemons up', value: round1(quantile(before, 0.5)), unit: 'ms', note: `${before.length} new sessions, one at a time, just before each pause` },
    { name: 'open p99, both daemons up', value: round1(quantile(before, 0.99)), unit: 'ms' },
    { name: 'open p50 while a member is paused', value: round1(quantile(paused, 0.5)), unit: 'ms', note: `${paused.length} new sessions, one at a time, during the pauses (half the tries reach the paused daemon)` },
    { name: CLUSTER_ROWS.pausedOpenP99, value: round1(quantile(paused, 0.99)), unit: 'ms', note: `max ${round1(paused.at(-1) ?? Number.NaN)} ms` },
  );
}

// ---------------------------------------------------------------------------------------------------------------
// 3. aggregate appends/s with 1, 2, 3 daemons

/** Busy and total jiffies of the whole machine, from /proc/stat. */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    // idle and iowait are the 4th and 5th numbers.
    return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

/** CPU ms so far of a set of processes (summed; a process that is gone counts 0). */
function cpuOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (processCpu(pid)?.total ?? 0), 0);
}

interface Window {
  readonly perSecond: number;
  readonly machineBusy: number;
  /** Cores' worth of CPU used by processes other than the nodes, the daemons and this one (other work on the machine). */
  readonly otherCores: number;
  readonly natsCpu: number;
  readonly daemonCpu: number;
  readonly loadCpu: number;
}

/** One set of daemons on its own prefix, with its sessions already opened through the queue group. */
interface DaemonSet {
  readonly n: number;
  readonly children: DaemonChild[];
  readonly client: BatonClient;
  readonly sessions: string[];
  readonly windows: Window[];
}

/** Appends back to back on every session of `set` (one in flight each) for `warmupMs`, then times one window. */
async function measureWindow(set: DaemonSet, allDaemonPids: readonly number[], natsPids: readonly number[], warmupMs: number, windowMs: number, cores: number): Promise<void> {
  let done = 0;
  let stop = false;
  const loops = Promise.all(
    set.sessions.map(async (sid, s) => {
      for (let i = 0; !stop; i++) {
        await set.client.append(sid, [message(`p${set.n}s${s}w${set.windows.length}`, i)]);
        done++;
      }
    }),
  );
  await new Promise((r) => setTimeout(r, warmupMs));
  const pids = set.children.map((c) => c.pid);
  const m0 = machineTicks();
  const [nats0, set0, all0, load0, done0, t0] = [cpuOf(natsPids), cpuOf(pids), cpuOf(allDaemonPids), process.cpuUsage(), done, performance.now()];
  await new Promise((r) => setTimeout(r, windowMs));
  const [nats1, set1, all1, load1, done1, t1] = [cpuOf(natsPids), cpuOf(pids), cpuOf(allDaemonPids), process.cpuUsage(load0), done, performance.now()];
  const m1 = machineTicks();
  stop = true;
  await loops;
  const appends = Math.max(1, done1 - done0);
  const loadMs = (load1.user + load1.system) / 1000;
  const busy = m0 !== undefined && m1 !== undefined ? (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total) : Number.NaN;
  set.windows.push({
    perSecond: (done1 - done0) / ((t1 - t0) / 1000),
    machineBusy: busy,
    // The idle daemon sets count as ours here (their heartbeats), not as other processes.
    otherCores: busy * cores - (nats1 - nats0 + all1 - all0 + loadMs) / (t1 - t0),
    natsCpu: ((nats1 - nats0) * 1000) / appends,
    daemonCpu: ((set1 - set0) * 1000) / appends,
    loadCpu: (loadMs * 1000) / appends,
  });
}

/**
 * Sets of 1, 2 and 3 daemons, all started first (on their own prefixes; a set not under load only beats its
 * heartbeats), then loaded one at a time in rounds whose order flips, so other work on the machine hits them alike.
 */
async function throughputRows(cluster: NatsClusterHandle, model: LoopbackModel, rows: BenchRow[]): Promise<void> {
  const SESSIONS = 30;
  const ROUNDS = 5;
  const WINDOW_MS = 3_000;
  const WARMUP_MS = 700;
  const cores = cpus().length;
  const transport = await NatsTransport.connect({ servers: [...cluster.urls] });
  const sets: DaemonSet[] = [];
  try {
    for (const n of [1, 2, 3]) {
      const prefix = `benchtp${n}`;
      const children: DaemonChild[] = [];
      const set: DaemonSet = { n, children, client: new BatonClient(transport, { prefix, timeoutMs: 30_000 }), sessions: [], windows: [] };
      sets.push(set);
      for (let i = 0; i < n; i++) children.push(await DaemonChild.spawn({ servers: serversFor(cluster, i), baseURL: model.baseURL, leaseMs: 5_000, durability: 'replicated', replicas: 3, prefix }));
      for (let i = 0; i < SESSIONS; i++) set.sessions.push((await set.client.open(OPEN)).session_id);
    }
    const natsPids = cluster.nodes.map((node) => node.pid);
    const allDaemonPids = sets.flatMap((s) => s.children.map((c) => c.pid));
    for (let round = 0; round < ROUNDS; round++) {
      for (const set of round % 2 === 0 ? sets : [...sets].reverse()) await measureWindow(set, allDaemonPids, natsPids, WARMUP_MS, WINDOW_MS, cores);
    }
    for (const set of sets) {
      const med = (pick: (w: Window) => number): number => median(set.windows.map(pick));
      const plural = set.n > 1 ? 's' : '';
      const spread = set.children.map((c) => set.sessions.filter((sid) => c.held().has(sid)).length);
      rows.push(
        {
          name: `aggregate appends/s, ${set.n} daemon${plural} (replicated)`,
          value: Math.round(med((w) => w.perSecond)),
          unit: 'appends/s',
          note: `${SESSIONS} sessions (${spread.join('/')} per daemon), 1 in flight each; median of ${ROUNDS} × ${WINDOW_MS / 1000} s windows (${set.windows.map((w) => Math.round(w.perSecond)).join(', ')})`,
        },
        {
          name: `  CPU per append, ${set.n} daemon${plural}`,
          value: round1(med((w) => w.natsCpu + w.daemonCpu + w.loadCpu)),
          unit: 'µs',
          note: `nats ${Math.round(med((w) => w.natsCpu))} + daemons ${Math.round(med((w) => w.daemonCpu))} + load ${Math.round(med((w) => w.loadCpu))} µs; machine ${Math.round(med((w) => w.machineBusy) * 100)}% busy of ${cores} cores, ${round1(med((w) => w.otherCores))} core of it other processes`,
        },
      );
    }
    // Per round, the ratio of the n-daemon window to the 1-daemon window of the same round; the median of those.
    const one = sets[0] as DaemonSet;
    for (const set of sets.slice(1)) {
      const ratios = set.windows.map((w, i) => w.perSecond / (one.windows[i]?.perSecond ?? Number.NaN));
      rows.push({ name: `scaling ${set.n} daemons / 1`, value: round2(median(ratios)), unit: '×', note: `median of per-round ratios; every process on these ${cores} cores: not a multi-machine figure` });
    }
  } finally {
    await transport.close();
    for (const set of sets) await stopAll(set.children);
  }
}

// ---------------------------------------------------------------------------------------------------------------

export type ClusterPart = 'latency' | 'takeover' | 'throughput' | 'nodeloss';

export async function benchCluster(parts: readonly ClusterPart[] = ['latency', 'takeover', 'throughput', 'nodeloss']): Promise<BenchSection> {
  const cluster = await startNatsCluster();
  const model = await startLoopbackModel({ mode: 'extractive' });
  const rows: BenchRow[] = [];
  try {
    if (parts.includes('latency')) await latencyRows(cluster, model, rows);
    if (parts.includes('takeover')) await takeoverRows(cluster, model, rows);
    if (parts.includes('throughput')) await throughputRows(cluster, model, rows);
    if (parts.includes('nodeloss')) await nodeLossRows(cluster, model, rows);
  } finally {
    await model.close();
    await cluster.stop();
  }
  return { title: `Cluster (3 nats-server nodes, R3, daemons in their own processes; all on this machine's ${cpus().length} cores)`, rows };
}

/** Informative bars of my own (the issue asks for the figures, not for thresholds). */
export function clusterTargets(section: BenchSection | undefined): SectionTarget[] {
  const find = (name: string): BenchRow | undefined => section?.rows.find((r) => r.name === name);
  const served = find(CLUSTER_ROWS.takeoverServed);
  const total = served === undefined ? Number.NaN : Number(served.unit.replace(/^of /, ''));
  return [
    { label: 'cluster: replicated vs local append p50 (sequential)', value: find(CLUSTER_ROWS.seqRatioP50)?.value, unit: '×', target: '≤ 3', pass: (v) => v <= 3 },
    {
      label: `cluster: takeover p99 after SIGKILL (lease ${SHORT_LEASE_MS} ms)`,
      value: find(CLUSTER_ROWS.takeoverP99)?.value,
      unit: 'ms',
      target: `≤ lease + 2 s = ${SHORT_LEASE_MS + 2_000}`,
      pass: (v) => v <= SHORT_LEASE_MS + 2_000,
    },
    {
      label: `cluster: takeover p99 after SIGSTOP (lease ${SHORT_LEASE_MS} ms)`,
      value: find(CLUSTER_ROWS.stopTakeoverP99)?.value,
      unit: 'ms',
      target: `≤ lease + 2 s = ${SHORT_LEASE_MS + 2_000}`,
      pass: (v) => v <= SHORT_LEASE_MS + 2_000,
    },
    {
      label: `cluster: open p99 while a member is paused (lease ${SHORT_LEASE_MS} ms)`,
      value: find(CLUSTER_ROWS.pausedOpenP99)?.value,
      unit: 'ms',
      target: `≤ lease + 2 s = ${SHORT_LEASE_MS + 2_000}`,
      pass: (v) => v <= SHORT_LEASE_MS + 2_000,
    },
    { label: 'cluster: killed or paused sessions served by the standby', value: served?.value, unit: served?.unit ?? '', target: 'all', pass: (v) => v === total },
  ];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const parts = process.env['BENCH_CLUSTER_PARTS'];
  const section = await benchCluster(parts === undefined || parts === '' ? undefined : (parts.split(',') as ClusterPart[]));
  printStandalone(section, (performance.now() - started) / 1000);
}
