import { jetstream, jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { z } from 'zod';
import { ClusterError } from './cluster-error.ts';
import { isTransient } from './jetstream-errors.ts';
import type { ClusterNames } from './cluster-names.ts';
import { SessionEpochs } from './session-epochs.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';

/** One daemon as its heartbeat in the cluster's KV bucket says. */
export interface DaemonStatus {
  readonly daemonId: string;
  /** Wall-clock time the daemon stamped in its newest heartbeat (its own clock). */
  readonly heartbeatAt: number;
  /**
   * How old the heartbeat looked when it was read: the reader's clock right after the read less `heartbeatAt`
   * (clock skew between the hosts included).
   */
  readonly ageMs: number;
  /** Sessions it said it holds in that heartbeat. */
  readonly sessions: number;
  readonly revision: number;
}

/** A session's newest claim (its owner hint `owner.<sid>`, then any newer epoch key): the epoch and its daemon. */
export interface SessionOwner {
  readonly sessionId: string;
  readonly epoch: number;
  readonly daemonId: string;
}

/** One replica of a JetStream asset: whether it is current and how many operations it is behind the leader. */
export interface ReplicaStatus {
  readonly server: string;
  readonly leader: boolean;
  readonly current: boolean;
  readonly offline: boolean;
  readonly lag: number;
}

export interface AssetStatus {
  readonly name: string;
  /** Null while JetStream elects the asset's leader (its state could not be read). */
  readonly messages: number | null;
  readonly bytes: number | null;
  readonly replicas: readonly ReplicaStatus[];
  /** The asset has no leader right now (JetStream did not answer for it, or named no leader): an election. */
  readonly electing: boolean;
}

/** What `readClusterStatus` reports: daemons, session owners, and the replicated log's and bucket's replicas. */
export interface ClusterStatus {
  readonly daemons: readonly DaemonStatus[];
  readonly sessions: readonly SessionOwner[];
  readonly log: AssetStatus | null;
  readonly bucket: AssetStatus;
}

const Heartbeat = z.object({ daemon_id: z.string(), at: z.number(), sessions: z.number().optional() });
const Hint = z.object({ epoch: z.number(), daemon: z.string() });

/** A JetStream asset's state as its stream info gives it: size, leader, replicas (lag 0 when in step), an election. */
export function assetStatusOf(info: StreamInfo): AssetStatus {
  const cluster = info.cluster;
  const replicas: ReplicaStatus[] = [];
  if (cluster?.leader !== undefined && cluster.leader !== '') replicas.push({ server: cluster.leader, leader: true, current: true, offline: false, lag: 0 });
  // JetStream leaves out `lag` (and `offline`) of a replica that is in step with the leader.
  for (const p of cluster?.replicas ?? []) replicas.push({ server: p.name, leader: false, current: p.current === true, offline: p.offline === true, lag: p.lag ?? 0 });
  // A replicated asset (it lists replicas) whose leader is not named is between leaders.
  const electing = cluster !== undefined && (cluster.leader === undefined || cluster.leader === '') && (cluster.replicas?.length ?? 0) > 0;
  return { name: info.config.name, messages: info.state.messages, bytes: info.state.bytes, replicas, electing };
}

function parsed<T>(schema: z.ZodType<T>, bytes: Uint8Array): T | null {
  try {
    const r = schema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/**
 * Reads a cluster's state from JetStream without joining it or creating anything: every daemon's heartbeat, every
 * session's owner hint, and the replicas of the log stream and the KV bucket (leader, current, lag; `electing` while
 * one has no leader). `now` is read after each value arrives, so every age is measured from its own read. Throws
 * `ClusterError('config')` when the bucket does not exist (no daemon ever ran in cluster mode on this prefix).
 */
export async function readClusterStatus(nc: NatsConnection, names: ClusterNames, now: () => number, retry: RetryPolicy = DEFAULT_RETRY): Promise<ClusterStatus> {
  // A read: tried again as a whole while the bucket has no leader (a node just went away).
  return await withRetry(`cluster status of ${names.prefix}`, () => readOnce(nc, names, now), retry);
}

async function readOnce(nc: NatsConnection, names: ClusterNames, now: () => number): Promise<ClusterStatus> {
  const jsm = await jetstreamManager(nc, { timeout: 5_000 });
  let bucketInfo: StreamInfo;
  try {
    bucketInfo = await jsm.streams.info(`KV_${names.bucket}`);
  } catch (err) {
    if (isTransient(err)) throw err;
    throw new ClusterError('config', `no cluster on prefix ${names.prefix}: KV bucket ${names.bucket} not found`, { bucket: names.bucket }, { cause: err });
  }
  // The log may be between leaders while the bucket is not: that is shown, not retried (nor taken for no log).
  const log = await jsm.streams.info(names.logStream).then(
    (info): AssetStatus => assetStatusOf(info),
    (err: unknown): AssetStatus | null => (isTransient(err) ? { name: names.logStream, messages: null, bytes: null, replicas: [], electing: true } : null),
  );
  const kv = await new Kvm(jetstream(nc, { timeout: 5_000 })).open(names.bucket);
  const epochs = new SessionEpochs(kv, names);
  const daemons: DaemonStatus[] = [];
  const sessions: SessionOwner[] = [];
  // Every key, filtered here (several filter subjects need a newer server than 2.9), each once: a key written while
  // the listing runs can be listed again.
  const keys = new Set<string>();
  for await (const key of await kv.keys()) if (key.startsWith('daemon.') || key.startsWith('owner.')) keys.add(key);
  for (const key of [...keys].sort()) {
    const entry = await kv.get(key);
    // The age is taken when the value arrived, not when the whole read began (it can take seconds).
    const readAt = now();
    if (entry === null || entry.operation !== 'PUT') continue;
    if (key.startsWith('daemon.')) {
      const beat = parsed(Heartbeat, entry.value);
      if (beat !== null) daemons.push({ daemonId: beat.daemon_id, heartbeatAt: beat.at, ageMs: Math.max(0, readAt - beat.at), sessions: beat.sessions ?? 0, revision: entry.revision });
    } else {
      const sessionId = key.slice('owner.'.length);
      // The hint may lag a claim just made: the epoch keys have the last word.
      const latest = parsed(Hint, entry.value) === null ? null : await epochs.latest(sessionId).catch(() => null);
      if (latest !== null) sessions.push({ sessionId, epoch: latest.epoch, daemonId: latest.daemon });
    }
  }
  return { daemons, sessions, log, bucket: assetStatusOf(bucketInfo) };
}
