import { NatsTransport } from '@baton/client';
import { ClusterError, clusterNames, readClusterStatus, type AssetStatus, type ClusterStatus } from '@baton/runtime';
import type { CliIo } from '../cli-io.ts';
import { NatsOptionError, natsConnectionOptions, type NatsConnectionFlags } from '../daemon/nats-connection.ts';
import { errorLine as message } from '../shutdown-signal.ts';

export interface ClusterStatusOptions extends NatsConnectionFlags {
  readonly prefix?: string;
  readonly json: boolean;
}

/** Exit codes of `baton cluster status`: 0 ok, 1 bad options, 2 no NATS server or no cluster on the prefix. */
export const CLUSTER_EXIT = { ok: 0, usage: 1, unreachable: 2 } as const;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function assetLine(label: string, a: AssetStatus): string {
  const replicas = a.replicas.map((r) => `${r.server}${r.leader ? ' (leader)' : r.offline ? ' offline' : r.current ? ` current, lag ${r.lag}` : ` behind, lag ${r.lag}`}`);
  if (a.electing) return `${label} ${a.name}: leader election in progress${replicas.length > 0 ? `; replicas: ${replicas.join(', ')}` : ''}`;
  const size = a.messages === null || a.bytes === null ? 'size unknown' : `${a.messages} messages, ${a.bytes} bytes`;
  return `${label} ${a.name}: ${size}; replicas: ${replicas.length > 0 ? replicas.join(', ') : 'one server (no JetStream cluster)'}`;
}

/** The status as text: daemons with heartbeat ages, sessions per owner, then the log's and bucket's replicas. */
export function clusterStatusText(status: ClusterStatus): string[] {
  const lines = [`daemons (${status.daemons.length}):`];
  const owned = new Map<string, number>();
  for (const s of status.sessions) owned.set(s.daemonId, (owned.get(s.daemonId) ?? 0) + 1);
  for (const d of status.daemons) lines.push(`  ${d.daemonId}  heartbeat ${seconds(d.ageMs)} ago  says it holds ${d.sessions}  owns ${owned.get(d.daemonId) ?? 0}`);
  const known = new Set(status.daemons.map((d) => d.daemonId));
  const orphaned = status.sessions.filter((s) => !known.has(s.daemonId)).length;
  lines.push(`sessions (${status.sessions.length}): ${orphaned} owned by a daemon with no heartbeat (taken over at their next open)`);
  if (status.log !== null) lines.push(assetLine('log', status.log));
  lines.push(assetLine('bucket', status.bucket));
  return lines;
}

/**
 * `baton cluster status`: reads the cluster's state from JetStream (no daemon needs to answer): every daemon's
 * heartbeat and its age, each session's owner, the replicated log's and the KV bucket's replicas with their lag.
 */
export async function runClusterStatus(options: ClusterStatusOptions, env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let connect;
  try {
    connect = await natsConnectionOptions(options, env);
  } catch (err) {
    if (!(err instanceof NatsOptionError)) throw err;
    io.err(`baton cluster status: ${err.message}`);
    return CLUSTER_EXIT.usage;
  }
  let transport: NatsTransport;
  try {
    transport = await NatsTransport.connect({ ...connect, name: `baton-cluster-status-${process.pid}`, maxReconnectAttempts: 0 });
  } catch (err) {
    io.err(`baton cluster status: cannot connect to NATS at ${options.nats}: ${message(err)}`);
    return CLUSTER_EXIT.unreachable;
  }
  try {
    const status = await readClusterStatus(transport.connection, clusterNames(options.prefix), Date.now);
    if (options.json) io.out(JSON.stringify(status));
    else for (const line of clusterStatusText(status)) io.out(line);
    return CLUSTER_EXIT.ok;
  } catch (err) {
    if (err instanceof ClusterError && err.code === 'config') {
      io.err(`baton cluster status: ${err.message} at ${options.nats}`);
      return CLUSTER_EXIT.unreachable;
    }
    throw err;
  } finally {
    await transport.close();
  }
}
