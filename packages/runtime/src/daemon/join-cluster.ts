import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transport, TransportSubscription } from '@baton/client';
import type { EventLog } from '@baton/log-schema';
import { HistoryStore } from '@baton/memory-store';
import type { Subjects } from '@baton/protocol';
import { ClusterMembership } from '../cluster/cluster-membership.ts';
import { clusterNames } from '../cluster/cluster-names.ts';
import { hydrateSession } from '../cluster/hydrate-session.ts';
import { joinSharedFiles, type JoinedSharedFiles } from '../cluster/join-shared-files.ts';
import type { ReplicatedEventLog } from '../cluster/replicated-event-log.ts';
import { unreplicatedRecords } from '../cluster/unreplicated-records.ts';
import { DEFAULT_RETRY } from '../cluster/retry.ts';
import type { LogLevel } from '../host/worker-messages.ts';
import type { ResolvedClusterOptions } from './cluster-options.ts';
import { ClusterRouting } from './cluster-routing.ts';

export interface JoinClusterOptions {
  readonly cluster: ResolvedClusterOptions;
  readonly daemonId: string;
  readonly transport: Transport;
  readonly subjects: Subjects;
  /** The daemon's own event log (LMDB). */
  readonly log: EventLog;
  /** Durability `replicated`: the log appends go through (seeded with a session's unreplicated records on its claim). */
  readonly replicated: ReplicatedEventLog | null;
  readonly dataDir: string;
  readonly wallClock: () => number;
  readonly logger: (level: LogLevel, msg: string, data?: Record<string, unknown>) => void;
  /** Start-up repair: interrupted local commits are finished before shared versions are written over the same files. */
  readonly recovered: Promise<void>;
  /** Subscribes a session this daemon now holds. */
  readonly serve: (sessionId: string) => TransportSubscription;
  /** Forgets a session this daemon no longer holds, without writing. */
  readonly forget: (sessionId: string) => void;
}

/** What a daemon holds once it joined a cluster. */
export interface JoinedCluster {
  readonly routing: ClusterRouting;
  readonly shared: JoinedSharedFiles;
}

/**
 * Cluster mode: one attempt to join the cluster (its JetStream resources, opened once, this daemon's heartbeat, the
 * shared project files) and to set up the routing of sessions between daemons. The caller keeps both, then claims the
 * sessions of its data directory no daemon ever claimed (`routing.adoptUnclaimed()`: a claim's hydration writes
 * through the daemon's log, which asks the routing who holds what) — before any request is served. An attempt that
 * fails after the heartbeat started leaves the cluster again, so the next attempt starts clean.
 */
export async function joinCluster(o: JoinClusterOptions): Promise<JoinedCluster> {
  const c = o.cluster;
  const membership = await ClusterMembership.join({
    openRetry: { ...DEFAULT_RETRY, deadlineMs: 0 },
    connection: c.connection,
    names: clusterNames(o.subjects.prefix),
    daemonId: o.daemonId,
    replicas: c.replicas,
    leaseMs: c.leaseMs,
    monotonic: c.monotonic,
    wallClock: o.wallClock,
    onError: (what, err) => o.logger('warn', `cluster ${what} failed`, { error: String(err) }),
    forgetDeadMs: c.forgetDeadMs,
    onForgot: (daemonId) => o.logger('info', 'deleted the heartbeat of a daemon silent for too long', { daemonId, forgetDeadMs: c.forgetDeadMs }),
  });
  let shared: JoinedSharedFiles;
  try {
    await replacePredecessor(membership, o.dataDir, o.logger);
    await o.recovered;
    shared = await joinSharedFiles({
      store: membership.store,
      daemonId: o.daemonId,
      memoryRoot: join(o.dataDir, 'memory'),
      historyDir: join(o.dataDir, 'history'),
      log: o.log,
      logger: o.logger,
    });
  } catch (err) {
    await membership.stop(true);
    throw err;
  }
  const routing = new ClusterRouting({
    membership,
    transport: o.transport,
    subjects: o.subjects,
    log: o.log,
    durability: c.durability,
    forwardTimeoutMs: c.forwardTimeoutMs,
    hydrate: async (claim) => {
      if (c.durability !== 'replicated') return;
      const files = { history: new HistoryStore(join(o.dataDir, 'history')), memoryRoot: join(o.dataDir, 'memory') };
      const report = await hydrateSession(o.log, claim.sessionId, claim.history, files);
      // Records written before this daemon replicated them: the replicated log gets them before anything else.
      if (report.unreplicated) await o.replicated?.seed(claim.sessionId, await unreplicatedRecords(o.log, claim.sessionId, files.history));
      o.logger('info', 'session hydrated', { sessionId: claim.sessionId, epoch: claim.epoch, ...report });
    },
    catchUp: (sessionId) => o.replicated?.catchUp(sessionId) ?? Promise.resolve(),
    serve: o.serve,
    forget: o.forget,
    logger: o.logger,
  });
  return { routing, shared };
}

/** Where a data directory keeps the id of the daemon that last joined a cluster with it. */
const DAEMON_ID_FILE = 'cluster-daemon-id';

/**
 * A restart takes its predecessor's place: the previous daemon on this data directory (dead, since a data directory
 * has one daemon) has its heartbeat deleted — its sessions are free at once and listings show one entry, not one per
 * restart — and this daemon's id is recorded for the next one. A failure is logged, not fatal.
 */
async function replacePredecessor(membership: ClusterMembership, dataDir: string, logger: JoinClusterOptions['logger']): Promise<void> {
  const file = join(dataDir, DAEMON_ID_FILE);
  try {
    const previous = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (previous !== '' && previous !== membership.daemonId) {
      await membership.store.kv.delete(membership.store.names.daemonKey(previous));
      logger('info', "deleted the heartbeat of this data directory's previous daemon", { previous });
    }
    await writeFile(file, `${membership.daemonId}\n`);
  } catch (err) {
    logger('warn', "could not replace this data directory's previous daemon in the cluster", { error: String(err) });
  }
}

/** Undoes a join (an attempt that failed after it, or one that succeeded after the daemon was told to stop). */
export async function leaveJoined(joined: JoinedCluster): Promise<void> {
  joined.shared.follower.stop();
  await joined.routing.leave();
}
