import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { NatsTransport, type BatonClient } from '@baton/client';
import { startLoopbackModel, startNatsCluster, startNatsServer, type LoopbackModel, type NatsClusterHandle, type NatsServerHandle } from '@baton/testing';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll } from 'vitest';
import { ClusterStore, SessionLog, clusterNames, foldLogEntries, type LogHistory } from '@baton/runtime';
import type { Message } from '@baton/protocol';
import { MODEL, SYSTEM_PROMPT, conversation } from './conversation.ts';

const CHILD = join(import.meta.dirname, '..', 'fixtures', 'cluster-daemon-child.ts');

/** One line a cluster daemon child printed (`ready`, `claimed`, `hydrated`, `dropped`, `left`, `error`). */
export interface ChildEvent {
  readonly ev: string;
  readonly at?: number;
  readonly sessionId?: string;
  readonly [key: string]: unknown;
}

export interface DaemonChildConfig {
  readonly servers: readonly string[];
  readonly baseURL: string;
  readonly leaseMs: number;
  readonly durability: 'local' | 'replicated';
  readonly replicas: number;
  /** Subject prefix (default `baton`). */
  readonly prefix?: string;
  /** A daemon silent this long has its heartbeat deleted by the others (default the daemon's). */
  readonly forgetDeadMs?: number;
  /** The data directory to serve (a restart on the same disk); default a new temporary one. */
  readonly dataDir?: string;
}

/** A `BatonDaemon` in cluster mode in its own process (stopped by pid). */
export class DaemonChild {
  readonly daemonId: string;
  readonly dataDir: string;
  readonly child: ChildProcess;
  readonly events: ChildEvent[];
  readonly #exited: Promise<void>;
  readonly #waiters: Set<(ev: ChildEvent) => void>;

  private constructor(daemonId: string, dataDir: string, child: ChildProcess, events: ChildEvent[], exited: Promise<void>, waiters: Set<(ev: ChildEvent) => void>) {
    this.daemonId = daemonId;
    this.dataDir = dataDir;
    this.child = child;
    this.events = events;
    this.#exited = exited;
    this.#waiters = waiters;
  }

  /** The first event (printed already, or to come) that `matches`; rejects when the daemon exits first. */
  event(matches: (ev: ChildEvent) => boolean): Promise<ChildEvent> {
    const seen = this.events.find(matches);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = (ev: ChildEvent): void => {
        if (!matches(ev)) return;
        this.#waiters.delete(waiter);
        resolve(ev);
      };
      this.#waiters.add(waiter);
      void this.#exited.then(() => {
        if (this.#waiters.delete(waiter)) reject(new Error(`cluster daemon ${this.daemonId} exited before the awaited event`));
      });
    });
  }

  static async spawn(config: DaemonChildConfig): Promise<DaemonChild> {
    const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), 'baton-cluster-child-')));
    const child = spawn(process.execPath, ['--conditions=@baton/source', '--import', 'tsx', CHILD, JSON.stringify({ ...config, dataDir })], { stdio: ['ignore', 'pipe', 'pipe'] });
    const events: ChildEvent[] = [];
    const waiters = new Set<(ev: ChildEvent) => void>();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4_000)));
    const ready = new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        let ev: ChildEvent;
        try {
          ev = JSON.parse(line) as ChildEvent;
        } catch {
          return;
        }
        events.push(ev);
        for (const w of [...waiters]) w(ev);
        if (ev.ev === 'ready') resolve(String(ev['daemonId']));
      });
      void exited.then(() => reject(new Error(`cluster daemon child exited before it was ready: ${stderr}`)));
    });
    return new DaemonChild(await ready, dataDir, child, events, exited, waiters);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Sessions this daemon claimed and has not dropped or handed off (as its own lines say). */
  held(): Set<string> {
    const held = new Set<string>();
    for (const e of this.events) {
      if (e.sessionId === undefined) continue;
      if (e.ev === 'claimed') held.add(e.sessionId);
      if (e.ev === 'dropped') held.delete(e.sessionId);
    }
    return held;
  }

  signal(signal: NodeJS.Signals): void {
    process.kill(this.pid, signal);
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.signal('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM (after SIGCONT, in case it is stopped) and waits for the exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.signal('SIGCONT');
      this.signal('SIGTERM');
    }
    await this.#exited;
  }
}

/**
 * Which daemon held each session at wall-clock time `at` (`Date.now()` of this host), by the daemons' own lines: the
 * newest epoch claimed before then. A holder that was taken over without noticing yet still lists the session in its
 * `held()`; the newer claim tells the truth.
 */
export function holdersAt(daemons: readonly DaemonChild[], at: number): Map<string, string> {
  const newest = new Map<string, { readonly daemonId: string; readonly epoch: number }>();
  for (const d of daemons) {
    for (const e of d.events) {
      if (e.ev !== 'claimed' || e.sessionId === undefined || typeof e.at !== 'number' || e.at >= at) continue;
      const epoch = Number(e['epoch']);
      const seen = newest.get(e.sessionId);
      if (seen === undefined || epoch > seen.epoch) newest.set(e.sessionId, { daemonId: d.daemonId, epoch });
    }
  }
  return new Map([...newest].map(([sid, h]) => [sid, h.daemonId]));
}

/**
 * Spawns one daemon per config, all at once; when one fails to start, the others are stopped (and their data
 * directories removed) before the error is thrown, so no child outlives a failed start.
 */
export async function spawnDaemons(configs: readonly DaemonChildConfig[]): Promise<DaemonChild[]> {
  const started = await Promise.allSettled(configs.map((c) => DaemonChild.spawn(c)));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed === undefined) return started.map((r) => (r as PromiseFulfilledResult<DaemonChild>).value);
  for (const r of started) {
    if (r.status !== 'fulfilled') continue;
    await r.value.kill();
    await rm(r.value.dataDir, { recursive: true, force: true });
  }
  throw failed.reason;
}

/** What a load of sessions has had acknowledged, by session. */
export class SessionLoad {
  readonly sessions: string[] = [];
  readonly acked = new Map<string, Set<string>>();
  readonly failures: string[] = [];
  readonly #client: BatonClient;
  readonly #prefix: string;

  constructor(client: BatonClient, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
  }

  async open(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const open = await this.#client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT });
      this.sessions.push(open.session_id);
    }
  }

  /** Every session appends turns `from`..`to - 1` (four messages per append), sessions in parallel. */
  async turns(from: number, to: number, onAck?: (sessionId: string, at: number) => void): Promise<void> {
    await Promise.all(
      this.sessions.map(async (sid, i) => {
        const messages = conversation(to, { prefix: `${this.#prefix}${i}-` }).slice(from * 4, to * 4);
        for (let k = 0; k < messages.length; k += 4) await this.append(sid, messages.slice(k, k + 4), onAck);
      }),
    );
  }

  async append(sid: string, batch: readonly Message[], onAck?: (sessionId: string, at: number) => void): Promise<void> {
    try {
      await this.#client.append(sid, [...batch]);
    } catch (err) {
      this.failures.push(`${sid}: ${String(err)}`);
      return;
    }
    const set = this.acked.get(sid) ?? new Set<string>();
    for (const m of batch) set.add(m.id);
    this.acked.set(sid, set);
    onAck?.(sid, performance.now());
  }

  ackedCount(): number {
    let n = 0;
    for (const s of this.acked.values()) n += s.size;
    return n;
  }
}

const stores = new WeakMap<NatsConnection, Promise<ClusterStore>>();

/** Opens the cluster's store, trying again for a while when JetStream is electing a leader (a node was killed). */
async function openStore(nc: NatsConnection, replicas: number): Promise<ClusterStore> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ClusterStore.open(nc, clusterNames('baton'), { replicas });
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A session's replicated log as JetStream holds it, folded (throws when two owners' records interleave). */
export async function replicatedHistory(nc: NatsConnection, sessionId: string, replicas: number): Promise<LogHistory> {
  let store = stores.get(nc);
  if (store === undefined) {
    store = openStore(nc, replicas);
    stores.set(nc, store);
  }
  // Entry by entry (requests in parallel, each answered by the stream's leader): no consumer to place or recover.
  const log = new SessionLog(await store, sessionId);
  const last = await log.lastIndex();
  const entries = await Promise.all(
    Array.from({ length: last }, async (_, i) => {
      const entry = await log.entryAt(i + 1);
      if (entry === null) throw new Error(`replicated log of ${sessionId}: no entry at ${i + 1}`);
      return { index: i + 1, entry };
    }),
  );
  return foldLogEntries(entries);
}

/** Message ids of the `messages.appended` records a replicated history holds for its session. */
export function historyIds(history: LogHistory, sessionId: string): Set<string> {
  const ids = new Set<string>();
  for (const b of history.batches) {
    for (const s of b.streams) {
      if (s.s !== `session/${sessionId}`) continue;
      for (const r of s.r) if (r.type === 'messages.appended') for (const m of (r.payload as { messages: { id: string }[] }).messages) ids.add(m.id);
    }
  }
  return ids;
}

/** Waits until every session's writer is idle and has settled once (polling `status`), or `timeoutMs` passed. */
export async function writersSettled(client: BatonClient, sessions: readonly string[], timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let settled = 0;
  for (const sid of sessions) {
    for (;;) {
      const s = await client.status(sid);
      if (s.writer === null && s.last_outcome !== null) {
        settled++;
        break;
      }
      if (performance.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return settled;
}

/**
 * A safety net for a test hook that starts a rig: each NATS node may take 30 s to be ready and the JetStream meta
 * leader 60 s more on a loaded machine, before the daemons start.
 */
export const RIG_START_TIMEOUT_MS = 180_000;

export interface ClusterRigOptions {
  readonly leaseMs: number;
  /** Daemons started with the rig (default 3); the i-th connects to the i-th node first and fails over to the others. */
  readonly daemons?: number;
  /** A daemon silent this long has its heartbeat deleted by the others (default the daemon's). */
  readonly forgetDeadMs?: number;
}

/**
 * NATS (a 3-node cluster with R3, or one plain server with R1), the loopback model in extractive mode, daemon processes
 * in cluster mode (durability replicated) and the test's own connection to every node.
 */
export interface ClusterRig<Nats> {
  readonly nats: Nats;
  readonly model: LoopbackModel;
  /** The running daemons; a test that restarts one puts the new one in its place. `stop` stops whatever is here. */
  readonly daemons: DaemonChild[];
  readonly transport: NatsTransport;
  /** The configuration the i-th daemon was started with (for starting it again on its data directory). */
  config(i: number): DaemonChildConfig;
  /** Starts one more daemon, stopped (and its data directory removed) with the rig. */
  spawn(config: DaemonChildConfig): Promise<DaemonChild>;
  stop(): Promise<void>;
}

/** A 3-node NATS cluster, the model and three (or `daemons`) daemons, replicas 3. */
export function startClusterRig(options: ClusterRigOptions): Promise<ClusterRig<NatsClusterHandle>> {
  return startRig(options, startNatsCluster, (c) => c.urls, 3);
}

/** One plain NATS server, the model and three (or `daemons`) daemons, replicas 1. */
export function startServerRig(options: ClusterRigOptions): Promise<ClusterRig<NatsServerHandle>> {
  return startRig(options, startNatsServer, (s) => [s.url], 1);
}

/**
 * The rig of the enclosing `describe`: started before its tests (hook timeout `RIG_START_TIMEOUT_MS`) and stopped
 * after them. What it returns reads the running rig, so it is used inside the tests only.
 */
export function useClusterRig(options: ClusterRigOptions): ClusterRig<NatsClusterHandle> {
  return rigHooks(() => startClusterRig(options));
}

/** `useClusterRig` on one plain NATS server (`startServerRig`). */
export function useServerRig(options: ClusterRigOptions): ClusterRig<NatsServerHandle> {
  return rigHooks(() => startServerRig(options));
}

function rigHooks<Nats>(start: () => Promise<ClusterRig<Nats>>): ClusterRig<Nats> {
  let rig: ClusterRig<Nats> | undefined;
  beforeAll(async () => {
    rig = await start();
  }, RIG_START_TIMEOUT_MS);
  afterAll(async () => {
    await rig?.stop();
  });
  const started = (): ClusterRig<Nats> => {
    if (rig === undefined) throw new Error('the cluster rig is not running (it starts before the tests of its describe)');
    return rig;
  };
  return {
    get nats() {
      return started().nats;
    },
    get model() {
      return started().model;
    },
    get daemons() {
      return started().daemons;
    },
    get transport() {
      return started().transport;
    },
    config: (i) => started().config(i),
    spawn: (config) => started().spawn(config),
    stop: () => started().stop(),
  };
}

async function startRig<Nats extends { stop(): Promise<void> }>(
  options: ClusterRigOptions,
  startNats: () => Promise<Nats>,
  urlsOf: (nats: Nats) => readonly string[],
  replicas: number,
): Promise<ClusterRig<Nats>> {
  const nats = await startNats();
  const urls = urlsOf(nats);
  const children: DaemonChild[] = [];
  let model: LoopbackModel | undefined;
  let transport: NatsTransport | undefined;
  const config = (i: number): DaemonChildConfig => ({
    servers: [urls[i % urls.length] as string, ...urls.filter((_, j) => j !== i % urls.length)],
    baseURL: (model as LoopbackModel).baseURL,
    leaseMs: options.leaseMs,
    durability: 'replicated',
    replicas,
    ...(options.forgetDeadMs !== undefined ? { forgetDeadMs: options.forgetDeadMs } : {}),
  });
  const daemons: DaemonChild[] = [];
  const stop = async (): Promise<void> => {
    await transport?.close();
    for (const d of new Set([...daemons, ...children])) {
      await d.stop();
      await rm(d.dataDir, { recursive: true, force: true });
    }
    await model?.close();
    await nats.stop();
  };
  try {
    model = await startLoopbackModel({ mode: 'extractive' });
    daemons.push(...(await spawnDaemons(Array.from({ length: options.daemons ?? 3 }, (_, i) => config(i)))));
    transport = await NatsTransport.connect({ servers: [...urls], maxReconnectAttempts: -1 });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nats,
    model,
    daemons,
    transport,
    config,
    spawn: async (c) => {
      const child = await DaemonChild.spawn(c);
      children.push(child);
      return child;
    },
    stop,
  };
}
