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
  /** `now - heartbeatAt`: how old the heartbeat looks from the reader's clock (clock skew included). */
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
  readonly messages: number;
  readonly bytes: number;
  readonly replicas: readonly ReplicaStatus[];
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

function assetOf(info: StreamInfo): AssetStatus {
  const cluster = info.cluster;
  const replicas: ReplicaStatus[] = [];
  if (cluster?.leader !== undefined) replicas.push({ server: cluster.leader, leader: true, current: true, offline: false, lag: 0 });
  for (const p of cluster?.replicas ?? []) replicas.push({ server: p.name, leader: false, current: p.current, offline: p.offline, lag: p.lag });
  return { name: info.config.name, messages: info.state.messages, bytes: info.state.bytes, replicas };
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
 * session's owner hint, and the replicas of the log stream and the KV bucket (leader, current, lag). Throws
 * `ClusterError('config')` when the bucket does not exist (no daemon ever ran in cluster mode on this prefix).
 */
export async function readClusterStatus(nc: NatsConnection, names: ClusterNames, now: number, retry: RetryPolicy = DEFAULT_RETRY): Promise<ClusterStatus> {
  // A read: tried again as a whole while JetStream elects a leader (a node just went away).
  return await withRetry(`cluster status of ${names.prefix}`, () => readOnce(nc, names, now), retry);
}

async function readOnce(nc: NatsConnection, names: ClusterNames, now: number): Promise<ClusterStatus> {
  const jsm = await jetstreamManager(nc, { timeout: 5_000 });
  let bucketInfo: StreamInfo;
  try {
    bucketInfo = await jsm.streams.info(`KV_${names.bucket}`);
  } catch (err) {
    if (isTransient(err)) throw err;
    throw new ClusterError('config', `no cluster on prefix ${names.prefix}: KV bucket ${names.bucket} not found`, { bucket: names.bucket }, { cause: err });
  }
  const logInfo = await jsm.streams.info(names.logStream).catch(() => null);
  const kv = await new Kvm(jetstream(nc, { timeout: 5_000 })).open(names.bucket);
  const epochs = new SessionEpochs(kv, names);
  const daemons: DaemonStatus[] = [];
  const sessions: SessionOwner[] = [];
  const keys: string[] = [];
  // Every key, filtered here: several filter subjects need a newer server than 2.9.
  for await (const key of await kv.keys()) if (key.startsWith('daemon.') || key.startsWith('owner.')) keys.push(key);
  for (const key of keys.sort()) {
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== 'PUT') continue;
    if (key.startsWith('daemon.')) {
      const beat = parsed(Heartbeat, entry.value);
      if (beat !== null) daemons.push({ daemonId: beat.daemon_id, heartbeatAt: beat.at, ageMs: Math.max(0, now - beat.at), sessions: beat.sessions ?? 0, revision: entry.revision });
    } else {
      const sessionId = key.slice('owner.'.length);
      // The hint may lag a claim just made: the epoch keys have the last word.
      const latest = parsed(Hint, entry.value) === null ? null : await epochs.latest(sessionId).catch(() => null);
      if (latest !== null) sessions.push({ sessionId, epoch: latest.epoch, daemonId: latest.daemon });
    }
  }
  return { daemons, sessions, log: logInfo === null ? null : assetOf(logInfo), bucket: assetOf(bucketInfo) };
}
