/**
 * Cluster benchmark on a 3-node NATS cluster (R3), on this machine's cores shared by every process:
 * - append latency with durability `replicated` vs `local` (one in-process daemon of each, on their own prefixes),
 *   measured in alternating blocks so machine noise hits both alike; the p50 and p99 ratios are the figures to watch;
 * - takeover time: sessions held by a daemon process that is SIGKILLed; per session, the time from the kill to its
 *   first append answered by another daemon (client failover, lease 1 s), p50 and p99;
 * - aggregate appends/s of concurrent sessions with 1, 2 and 3 daemon processes (replicated).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/cluster.bench.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import type { Message } from '@baton/protocol';
import { startLoopbackModel, startNatsCluster, type LoopbackModel, type NatsClusterHandle } from '@baton/testing';
import { DaemonChild } from '../test/support/cluster-rig.ts';
import type { BenchSection } from './bench-types.ts';

const MODEL = { id: 'gpt-4o', context_window: 200_000, max_output_tokens: 8_000 };

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

function message(tag: string, i: number): Message {
  return { id: `${tag}-${i}`, role: 'user', content: `Step ${i}: ran the tests of the order service again; two failures remain in the refund path.` };
}

interface InProcess {
  readonly daemon: BatonDaemon;
  readonly client: BatonClient;
  close(): Promise<void>;
}

async function inProcessDaemon(urls: readonly string[], model: LoopbackModel, prefix: string, durability: 'local' | 'replicated'): Promise<InProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), `baton-bench-cluster-${durability}-`));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const transport = await NatsTransport.connect({ servers: [...urls] });
  const daemon = BatonDaemon.start({
    transport,
    log,
    dataDir,
    prefix,
    poolSize: 1,
    model: { baseURL: model.baseURL, apiKey: 'bench', maxRetries: 0 },
    cluster: { connection: transport.connection, durability, replicas: 3, leaseMs: 5_000 },
  });
  await daemon.ready();
  const clientTransport = await NatsTransport.connect({ servers: [...urls] });
  const client = new BatonClient(clientTransport, { prefix, timeoutMs: 30_000 });
  return {
    daemon,
    client,
    close: async () => {
      await clientTransport.close();
      await daemon.stop();
      await transport.close();
      await log.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Appends one message at a time, `n` times, on one session; the round-trip times in ms. */
async function timedAppends(client: BatonClient, sessionId: string, tag: string, from: number, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = from; i < from + n; i++) {
    const t = performance.now();
    await client.append(sessionId, [message(tag, i)]);
    out.push(performance.now() - t);
  }
  return out;
}

async function latencyRows(cluster: NatsClusterHandle, model: LoopbackModel, section: BenchSection): Promise<void> {
  const local = await inProcessDaemon(cluster.urls, model, 'benchlocal', 'local');
  const replicated = await inProcessDaemon(cluster.urls, model, 'benchrepl', 'replicated');
  try {
    const open = { project_id: 'bench', model: MODEL, checkpoint: { enabled: false } };
    const ls = (await local.client.open(open)).session_id;
    const rs = (await replicated.client.open(open)).session_id;
    await timedAppends(local.client, ls, 'w', 0, 50);
    await timedAppends(replicated.client, rs, 'w', 0, 50);
    const l: number[] = [];
    const r: number[] = [];
    const BLOCK = 100;
    for (let round = 0; round < 6; round++) {
      const at = 50 + round * BLOCK;
      // The order flips every round.
      if (round % 2 === 0) {
        l.push(...(await timedAppends(local.client, ls, 'm', at, BLOCK)));
        r.push(...(await timedAppends(replicated.client, rs, 'm', at, BLOCK)));
      } else {
        r.push(...(await timedAppends(replicated.client, rs, 'm', at, BLOCK)));
        l.push(...(await timedAppends(local.client, ls, 'm', at, BLOCK)));
      }
    }
    l.sort((a, b) => a - b);
    r.sort((a, b) => a - b);
    section.rows.push(
      { name: 'append p50, durability local', value: quantile(l, 0.5), unit: 'ms', note: `${l.length} appends, one session, one message each` },
      { name: 'append p50, durability replicated (R3)', value: quantile(r, 0.5), unit: 'ms' },
      { name: 'p50 ratio replicated/local', value: quantile(r, 0.5) / quantile(l, 0.5), unit: '×' },
      { name: 'append p99, durability local', value: quantile(l, 0.99), unit: 'ms' },
      { name: 'append p99, durability replicated (R3)', value: quantile(r, 0.99), unit: 'ms' },
      { name: 'p99 ratio replicated/local', value: quantile(r, 0.99) / quantile(l, 0.99), unit: '×' },
    );
  } finally {
    await replicated.close();
    await local.close();
  }
}

async function takeoverRows(cluster: NatsClusterHandle, model: LoopbackModel, section: BenchSection): Promise<void> {
  const LEASE_MS = 1_000;
  const config = { servers: cluster.urls, baseURL: model.baseURL, leaseMs: LEASE_MS, durability: 'replicated' as const, replicas: 3 };
  const transport = await NatsTransport.connect({ servers: [...cluster.urls], maxReconnectAttempts: -1 });
  const client = new BatonClient(transport, { timeoutMs: 5_000, failover: { timeoutMs: 30_000, delayMs: 50, maxDelayMs: 200 } });
  const children: DaemonChild[] = [];
  const samples: number[] = [];
  try {
    children.push(await DaemonChild.spawn(config));
    for (let round = 0; round < 3; round++) {
      // The sessions of this round are opened while only the daemon that will be killed runs.
      const victim = children.at(-1) as DaemonChild;
      const sessions: string[] = [];
      for (let i = 0; i < 10; i++) {
        const sid = (await client.open({ project_id: 'bench', model: MODEL, checkpoint: { enabled: false } })).session_id;
        await client.append(sid, [message(`t${round}`, i)]);
        sessions.push(sid);
      }
      const standby = await DaemonChild.spawn(config);
      children.push(standby);
      const killedAt = performance.now();
      await victim.kill();
      await Promise.all(
        sessions.map(async (sid, i) => {
          await client.append(sid, [message(`t${round}-after`, i)]);
          samples.push(performance.now() - killedAt);
        }),
      );
    }
  } finally {
    await transport.close();
    for (const c of children) {
      await c.stop();
      await rm(c.dataDir, { recursive: true, force: true });
    }
  }
  samples.sort((a, b) => a - b);
  section.rows.push(
    { name: 'takeover p50 (kill → first append served elsewhere)', value: quantile(samples, 0.5), unit: 'ms', note: `${samples.length} sessions over 3 kills, lease ${LEASE_MS} ms` },
    { name: 'takeover p99', value: quantile(samples, 0.99), unit: 'ms' },
  );
}

async function throughputRows(cluster: NatsClusterHandle, model: LoopbackModel, section: BenchSection): Promise<void> {
  const SESSIONS = 24;
  const DURATION_MS = 4_000;
  const base: { n: number; perSecond: number }[] = [];
  for (const n of [1, 2, 3]) {
    const prefix = `benchtp${n}`;
    const children: DaemonChild[] = [];
    const transport = await NatsTransport.connect({ servers: [...cluster.urls] });
    try {
      for (let i = 0; i < n; i++) children.push(await DaemonChild.spawn({ servers: cluster.urls, baseURL: model.baseURL, leaseMs: 5_000, durability: 'replicated', replicas: 3, prefix }));
      const client = new BatonClient(transport, { prefix, timeoutMs: 30_000 });
      const sessions: string[] = [];
      for (let i = 0; i < SESSIONS; i++) sessions.push((await client.open({ project_id: 'bench', model: MODEL, checkpoint: { enabled: false } })).session_id);
      let done = 0;
      const end = performance.now() + DURATION_MS;
      const started = performance.now();
      await Promise.all(
        sessions.map(async (sid, s) => {
          for (let i = 0; performance.now() < end; i++) {
            await client.append(sid, [message(`p${s}`, i)]);
            done++;
          }
        }),
      );
      const perSecond = done / ((performance.now() - started) / 1000);
      base.push({ n, perSecond });
      section.rows.push({ name: `aggregate appends/s, ${n} daemon${n > 1 ? 's' : ''} (replicated)`, value: perSecond, unit: 'appends/s', note: `${SESSIONS} sessions appending back to back` });
    } finally {
      await transport.close();
      for (const c of children) {
        await c.stop();
        await rm(c.dataDir, { recursive: true, force: true });
      }
    }
  }
  const one = base[0]?.perSecond ?? Number.NaN;
  for (const b of base.slice(1)) section.rows.push({ name: `scaling ${b.n} daemons / 1`, value: b.perSecond / one, unit: '×' });
}

export async function benchCluster(): Promise<BenchSection> {
  const cluster = await startNatsCluster();
  const model = await startLoopbackModel({ mode: 'extractive' });
  const section: BenchSection = { title: 'Cluster (3 nats-server nodes, R3; every process on this machine)', rows: [] };
  try {
    await latencyRows(cluster, model, section);
    await takeoverRows(cluster, model, section);
    await throughputRows(cluster, model, section);
  } finally {
    await model.close();
    await cluster.stop();
  }
  return section;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const section = await benchCluster();
  console.log(section.title);
  for (const row of section.rows) console.log(`  ${row.name}: ${row.value.toFixed(2)} ${row.unit}${row.note !== undefined ? `  (${row.note})` : ''}`);
}
