import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultBinary, freePort, spawnServer, stopByPid, waitReady } from './nats-server.ts';

/** One node of a test cluster: its own client, route and monitoring ports, `server_name` and store directory. */
export interface NatsClusterNode {
  /** `server_name`: `n1`, `n2`, … */
  readonly name: string;
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Pid of the running process; changes when the node is restarted. */
  readonly pid: number;
  /** Whether the node's process is running. */
  readonly running: boolean;
  /** Sends `signal` to the node's process by pid (SIGKILL, SIGSTOP, SIGCONT, …) and, for SIGKILL, waits for it to exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts the node again on the same ports and store directory (after a kill); resolves once it is ready. */
  restart(): Promise<void>;
}

/** A cluster of `nats-server` processes with routes to each other and JetStream, for tests and benchmarks. */
export interface NatsClusterHandle {
  readonly nodes: readonly NatsClusterNode[];
  /** Every node's client URL, to give a client all of them. */
  readonly urls: readonly string[];
  /** Stops every node by pid and removes the store directories. */
  stop(): Promise<void>;
}

export interface NatsClusterOptions {
  /** Nodes (default 3; JetStream replication needs a majority of them up). */
  readonly size?: number;
  readonly binary?: string;
  /**
   * Nodes started now (default all): the others are started later with `restart()`, as when an operator brings a
   * cluster up one server at a time. With fewer than all, the start does not wait for a JetStream meta leader.
   */
  readonly running?: number;
  /** How long to wait for each node to log "Server is ready". Default 30 s. */
  readonly readyTimeoutMs?: number;
  /**
   * How long to wait for the JetStream meta leader once every node is ready. Default 60 s: a safety net, generous
   * because an election takes far longer when several clusters start at once on a loaded machine.
   */
  readonly metaLeaderTimeoutMs?: number;
  /** More configuration for every node, as config-file text (e.g. an `authorization { users: [...] }` block). */
  readonly config?: string;
}

interface NodePorts {
  readonly name: string;
  readonly client: number;
  readonly route: number;
  readonly monitor: number;
  readonly dir: string;
}

function nodeConfig(node: NodePorts, all: readonly NodePorts[], extra = ''): string {
  const routes = all.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.route}`);
  return [
    `listen: 127.0.0.1:${node.client}`,
    `server_name: ${node.name}`,
    `http: 127.0.0.1:${node.monitor}`,
    `jetstream { store_dir: "${join(node.dir, 'js')}", max_memory_store: 256MB, max_file_store: 4GB }`,
    `cluster { name: baton-test, listen: 127.0.0.1:${node.route}, routes: [${routes.join(', ')}] }`,
    extra,
    '',
  ].join('\n');
}

function getJson(port: number, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('monitoring request timed out')));
    req.on('error', reject);
  });
}

/** Whether the node's monitoring endpoint names a JetStream meta leader and sees every peer. */
async function hasMetaLeader(port: number, size: number): Promise<boolean> {
  try {
    const jsz = (await getJson(port, '/jsz')) as { meta_cluster?: { leader?: string; cluster_size?: number } };
    const meta = jsz.meta_cluster;
    return meta?.leader !== undefined && meta.leader !== '' && (meta.cluster_size ?? 0) >= size;
  } catch {
    return false;
  }
}

async function waitMetaLeader(ports: readonly NodePorts[], size: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = await Promise.all(ports.map((p) => hasMetaLeader(p.monitor, size)));
    if (ready.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`nats cluster: no JetStream meta leader after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts `size` real `nats-server` processes on loopback ports, each with its own `server_name`, store directory and
 * JetStream, routed to each other in one cluster, and waits until every node is ready and JetStream has a meta
 * leader. Nodes can be killed (by pid) and restarted to test failover; `stop` stops them all by pid.
 */
export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsClusterHandle> {
  const size = options.size ?? 3;
  const timeoutMs = options.readyTimeoutMs ?? 30_000;
  const metaLeaderTimeoutMs = options.metaLeaderTimeoutMs ?? 60_000;
  const binary = options.binary ?? defaultBinary();
  const root = await mkdtemp(join(tmpdir(), 'baton-nats-cluster-'));
  const ports: NodePorts[] = [];
  const pickPorts = async (): Promise<void> => {
    ports.length = 0;
    for (let i = 1; i <= size; i++) {
      ports.push({ name: `n${i}`, client: await freePort(), route: await freePort(), monitor: await freePort(), dir: join(root, `n${i}`) });
    }
  };
  await pickPorts();
  const children: (ChildProcess | null)[] = ports.map(() => null);
  const start = async (i: number): Promise<void> => {
    const p = ports[i] as NodePorts;
    const conf = join(p.dir, 'server.conf');
    await mkdir(p.dir, { recursive: true });
    await writeFile(conf, nodeConfig(p, ports, options.config));
    const child = await spawnServer(binary, ['-c', conf]);
    children[i] = child;
    await waitReady(child, timeoutMs);
  };
  const stopAll = async (): Promise<void> => {
    await Promise.all(
      children.map(async (c) => {
        if (c === null || c.pid === undefined) return;
        // A stopped (SIGSTOP) node would ignore SIGTERM until continued.
        try {
          process.kill(c.pid, 'SIGCONT');
        } catch {
          // already gone
        }
        await stopByPid(c, c.pid);
      }),
    );
  };
  // A port found free may be taken by another process before its node binds it (tests run side by side): such a start
  // is tried again on fresh ports, twice at most.
  for (let attempt = 1; ; attempt++) {
    try {
      const running = Math.min(size, options.running ?? size);
      await Promise.all(ports.slice(0, running).map((_, i) => start(i)));
      if (running === size) await waitMetaLeader(ports, size, metaLeaderTimeoutMs);
      break;
    } catch (err) {
      await stopAll();
      children.fill(null);
      if (attempt < 3 && /address already in use/i.test(String(err))) {
        await rm(root, { recursive: true, force: true });
        await pickPorts();
        continue;
      }
      await rm(root, { recursive: true, force: true });
      throw err;
    }
  }
  const nodes: NatsClusterNode[] = ports.map((p, i) => ({
    name: p.name,
    url: `nats://127.0.0.1:${p.client}`,
    port: p.client,
    get pid(): number {
      return children[i]?.pid ?? -1;
    },
    get running(): boolean {
      const c = children[i];
      return c !== null && c !== undefined && c.exitCode === null && c.signalCode === null;
    },
    async kill(signal: NodeJS.Signals): Promise<void> {
      const c = children[i];
      if (c === null || c === undefined || c.pid === undefined || c.exitCode !== null || c.signalCode !== null) return;
      const exited = signal === 'SIGKILL' ? new Promise<void>((resolve) => c.once('exit', () => resolve())) : Promise.resolve();
      process.kill(c.pid, signal);
      await exited;
    },
    async restart(): Promise<void> {
      const c = children[i];
      if (c !== null && c !== undefined && c.exitCode === null && c.signalCode === null) throw new Error(`nats cluster: node ${p.name} is still running`);
      await start(i);
    },
  }));
  let stopped: Promise<void> | undefined;
  return {
    nodes,
    urls: nodes.map((n) => n.url),
    stop: () => {
      stopped ??= stopAll().finally(() => rm(root, { recursive: true, force: true }));
      return stopped;
    },
  };
}
