import type { NatsConnection } from '@nats-io/nats-core';
import { ClusterError } from '../cluster/cluster-error.ts';
import type { Durability } from './cluster-routing.ts';

/** Cluster mode of a daemon (`DaemonOptions.cluster`): several daemons share the sessions of one NATS cluster. */
export interface ClusterOptions {
  /** The NATS connection JetStream is used through (the daemon's own: `NatsTransport.connection`). */
  readonly connection: NatsConnection;
  /** Replicas of the replicated log stream and the KV bucket: 1 on a single server, 3 on a 3-node cluster. Default 1. */
  readonly replicas?: number;
  /** Lease TTL: a daemon silent this long may have its sessions taken over. Default 15 000 ms. */
  readonly leaseMs?: number;
  /**
   * `local` (default): a session's records stay on its holder's disk (it cannot move to another daemon);
   * `replicated`: an append is acknowledged only once the local log and the replicated log both hold it, and another
   * daemon can take the session over.
   */
  readonly durability?: Durability;
  /** How long a daemon waits for a session's holder to answer a forwarded `open`. Default 2 000 ms. */
  readonly forwardTimeoutMs?: number;
  /** Milliseconds on a monotonic clock, for lease judgements (default `performance.now`). */
  readonly monotonic?: () => number;
  /** Delay before the second attempt to join the cluster; it doubles up to 5 s between later ones. Default 250 ms. */
  readonly joinRetryMs?: number;
  /**
   * A daemon whose heartbeat has not changed for this long is taken to be dead for good: its heartbeat is deleted and
   * `baton cluster status` stops listing it. Default 600 000 ms (10 min); at least the lease.
   */
  readonly forgetDeadMs?: number;
}

export interface ResolvedClusterOptions {
  readonly connection: NatsConnection;
  readonly replicas: number;
  readonly leaseMs: number;
  readonly durability: Durability;
  readonly forwardTimeoutMs: number;
  readonly monotonic: () => number;
  readonly joinRetryMs: number;
  readonly forgetDeadMs: number;
}

/** Defaults applied and values checked once, at start-up; `ClusterError('config')` names the bad option. */
export function resolveClusterOptions(o: ClusterOptions): ResolvedClusterOptions {
  const replicas = o.replicas ?? 1;
  const leaseMs = o.leaseMs ?? 15_000;
  const durability = o.durability ?? 'local';
  const forwardTimeoutMs = o.forwardTimeoutMs ?? 2_000;
  const joinRetryMs = o.joinRetryMs ?? 250;
  const forgetDeadMs = o.forgetDeadMs ?? 600_000;
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) throw new ClusterError('config', `cluster.replicas must be an integer from 1 to 5, got ${String(replicas)}`);
  if (!Number.isInteger(leaseMs) || leaseMs < 300) throw new ClusterError('config', `cluster.leaseMs must be an integer of at least 300, got ${String(leaseMs)}`);
  if (durability !== 'local' && durability !== 'replicated') throw new ClusterError('config', `cluster.durability must be local or replicated, got ${String(durability)}`);
  if (!Number.isInteger(forwardTimeoutMs) || forwardTimeoutMs < 1) throw new ClusterError('config', `cluster.forwardTimeoutMs must be a positive integer, got ${String(forwardTimeoutMs)}`);
  if (!Number.isInteger(joinRetryMs) || joinRetryMs < 1) throw new ClusterError('config', `cluster.joinRetryMs must be a positive integer, got ${String(joinRetryMs)}`);
  if (!Number.isInteger(forgetDeadMs) || forgetDeadMs < leaseMs) throw new ClusterError('config', `cluster.forgetDeadMs must be an integer of at least the lease (${leaseMs}), got ${String(forgetDeadMs)}`);
  return { connection: o.connection, replicas, leaseMs, durability, forwardTimeoutMs, monotonic: o.monotonic ?? (() => performance.now()), joinRetryMs, forgetDeadMs };
}
