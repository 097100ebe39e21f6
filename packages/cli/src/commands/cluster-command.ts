import { ClusterError, clusterNames, readClusterStatus, type AssetStatus, type ClusterStatus } from '@baton/runtime';
import type { CliIo } from '../cli-io.ts';
import { connectNats } from '../daemon/nats-connection.ts';
import type { ClusterStatusFlags } from '../flags/command-flags.ts';
import { EXIT } from '../exit-codes.ts';

/** `baton cluster status`'s options: its flags as parsed. */
export type ClusterStatusOptions = ClusterStatusFlags;

/** Exit codes of `baton cluster status`: 0 ok, 1 bad options, 2 no NATS server or no cluster on the prefix. */
export const CLUSTER_EXIT = { ok: EXIT.ok, usage: EXIT.failed, unreachable: EXIT.notFound } as const;

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
  const transport = await connectNats('cluster status', options, env, io, { name: `baton-cluster-status-${process.pid}`, maxReconnectAttempts: 0 });
  if (typeof transport === 'number') return transport;
  try {
    const status = await readClusterStatus(transport.connection, clusterNames(options.prefix), Date.now);
    if (options.json === true) io.out(JSON.stringify(status));
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
