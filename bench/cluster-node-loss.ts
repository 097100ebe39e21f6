/**
 * What losing a nats-server node costs the sessions (the cluster bench's `nodeloss` part): three daemons in cluster
 * mode (durability replicated, R3, the CLI's default lease) serve sessions that append without pause, one append in
 * flight each, through `BatonClient` with failover. Four events, one after the other, each once the load has gone on:
 * a planned step-down of the log stream's leader and of the KV bucket's (`$JS.API.STREAM.LEADER.STEPDOWN`, what `nats
 * stream cluster step-down` sends), then SIGKILL of the node that leads the log stream and of the one that leads the
 * bucket (each started again afterwards). Per event, each session's longest silence — the time between two of its
 * acknowledged appends — from just before the event until every session has had appends answered again.
 */
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { BatonClient, NatsTransport } from '@baton/client';
import { clusterNames } from '@baton/runtime';
import type { LoopbackModel, NatsClusterHandle } from '@baton/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { DaemonChild, SessionLoad } from '../test/support/cluster-rig.ts';
import type { BenchRow } from './bench-types.ts';
import { median } from './bench-process.ts';

const PREFIX = 'benchnode';
const SESSIONS = 12;
/** `baton daemon --cluster` without `--lease-ms`: longer than a JetStream election, so no lease lapses meanwhile. */
const LEASE_MS = 15_000;
/** Appends every session has answered after an event before its silences are read. */
const AFTER = 5;

interface Load {
  /** Per session, its acknowledgement times. */
  readonly acks: Map<string, number[]>;
  onAck(sid: string, at: number): void;
  /** Resolves once every session has `n` more acknowledgements than now. */
  each(n: number): Promise<void>;
}

function trackAcks(sessions: readonly string[]): Load {
  const acks = new Map(sessions.map((s) => [s, [] as number[]]));
  const waiters: { ready: () => boolean; resolve: () => void }[] = [];
  return {
    acks,
    onAck(sid, at) {
      acks.get(sid)?.push(at);
      for (const w of waiters.filter((x) => x.ready())) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    each(n) {
      const base = new Map(sessions.map((s) => [s, acks.get(s)?.length ?? 0]));
      const ready = (): boolean => sessions.every((s) => (acks.get(s)?.length ?? 0) >= (base.get(s) ?? 0) + n);
      return new Promise((resolve) => (ready() ? resolve() : waiters.push({ ready, resolve })));
    },
  };
}

/** Per session, its longest silence (ms) among the acknowledgements from `from` on. */
function silences(load: Load, from: number): number[] {
  return [...load.acks.values()].map((times) => {
    let longest = 0;
    let prev = from;
    for (const t of times) {
      if (t < from) continue;
      longest = Math.max(longest, t - prev);
      prev = t;
    }
    return longest;
  });
}

export async function nodeLossRows(cluster: NatsClusterHandle, model: LoopbackModel, rows: BenchRow[]): Promise<void> {
  const names = clusterNames(PREFIX);
  const urls = [...cluster.urls];
  const children: DaemonChild[] = [];
  const transport = await NatsTransport.connect({ servers: urls, maxReconnectAttempts: -1 });
  try {
    for (let i = 0; i < 3; i++) {
      const servers = [...urls.slice(i), ...urls.slice(0, i)];
      children.push(await DaemonChild.spawn({ servers, baseURL: model.baseURL, leaseMs: LEASE_MS, durability: 'replicated', replicas: 3, prefix: PREFIX }));
    }
    const client = new BatonClient(transport, { prefix: PREFIX, timeoutMs: 10_000, failover: { timeoutMs: 60_000, attemptTimeoutMs: 10_000, openAttemptTimeoutMs: 1_000, delayMs: 50, maxDelayMs: 250 } });
    const load = new SessionLoad(client, 'node');
    await load.open(SESSIONS);
    const acks = trackAcks(load.sessions);
    let stopping = false;
    const running = load.sessions.map(async (sid, i) => {
      for (let k = 0; !stopping; k++) {
        await load.append(sid, [{ id: `node${i}-${k}`, role: 'user', content: `step ${k}: ran the tests again, two failures remain` }], (s, at) => acks.onAck(s, at));
      }
    });
    await acks.each(AFTER);
    const jsm = await jetstreamManager(transport.connection, { timeout: 10_000 });
    const leaderOf = async (stream: string): Promise<string> => (await jsm.streams.info(stream)).cluster?.leader ?? '?';
    const streams = [
      { what: 'log stream', stream: names.logStream },
      { what: 'KV bucket', stream: `KV_${names.bucket}` },
    ];
    const measure = async (label: string, event: () => Promise<void>, note: string): Promise<void> => {
      const from = performance.now();
      await event();
      await acks.each(AFTER);
      const s = silences(acks, from).sort((a, b) => a - b);
      rows.push(
        { name: `${label}: stall per session, median`, value: Math.round(median(s)), unit: 'ms', note: `${note}; each session's longest gap between acknowledged appends, ${SESSIONS} sessions appending back to back, lease ${LEASE_MS} ms` },
        { name: `${label}: stall, max`, value: Math.round(s.at(-1) ?? Number.NaN), unit: 'ms' },
      );
    };
    for (const { what, stream } of streams) {
      const leader = await leaderOf(stream);
      await measure(`step-down of the ${what} leader`, async () => {
        await transport.connection.request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, undefined, { timeout: 10_000 });
      }, `planned: leader ${leader} steps down`);
    }
    for (const { what, stream } of streams) {
      const leader = await leaderOf(stream);
      const node = cluster.nodes.find((n) => n.name === leader);
      if (node === undefined) throw new Error(`no node named ${leader} leads ${stream}`);
      const alsoLeads = [];
      for (const other of streams) if (other.stream !== stream && (await leaderOf(other.stream)) === leader) alsoLeads.push(other.what);
      await measure(`SIGKILL of the node leading the ${what}`, () => node.kill('SIGKILL'), `node ${leader} killed${alsoLeads.length > 0 ? ` (it led the ${alsoLeads.join(', ')} too)` : ''}, started again after`);
      await node.restart();
      await acks.each(AFTER);
    }
    stopping = true;
    await Promise.all(running);
    rows.push({ name: 'node loss: appends failed', value: load.failures.length, unit: `of ${[...acks.acks.values()].reduce((n, a) => n + a.length, 0) + load.failures.length}`, note: load.failures[0] ?? 'none' });
  } finally {
    await transport.close();
    for (const c of children) {
      await c.stop();
      await rm(c.dataDir, { recursive: true, force: true });
    }
  }
}
