import { statSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_STREAMS_PREFIX, type EventLog } from '@baton/log-schema';
import type { RuntimeCluster, RuntimeStatusReply } from '@baton/protocol';
import { LmdbEventLog } from '../event-log/lmdb-event-log.ts';
import { StreamCounts } from '../event-log/stream-counts.ts';
import type { HostPool } from '../host/host-pool.ts';
import type { NotServing } from './router.ts';
import type { SessionService } from './session-service.ts';

export interface RuntimeStatusSources {
  readonly daemonId: string;
  readonly uptimeMs: number;
  readonly log: EventLog;
  readonly dataDir: string;
  readonly sessions: SessionService;
  readonly pool: HostPool;
  /** Whether start-up finished (the daemon serves sessions), and otherwise why not. */
  readonly serving: boolean;
  readonly notServing: NotServing | null;
  /** Cluster mode, once joined: this daemon's view of the cluster (`Router.clusterStatus`). */
  readonly cluster: RuntimeCluster | null;
}

/**
 * `runtime.status`: sessions resident (`sessions`), in the log (`sessions_total`, from the log's stream counts, no
 * walk over the streams) and quarantined; writers; pool (each worker's event-loop utilisation, sessions and waiting
 * calls; the pool's utilisation is their mean); the process's RSS; the LMDB data file's size; in cluster mode this
 * daemon's view of the cluster; whether it serves yet, and why not.
 */
export function runtimeStatusOf(o: RuntimeStatusSources): Omit<RuntimeStatusReply, 'ok'> {
  const workers = o.pool.workers();
  const util = workers.length === 0 ? Number.NaN : workers.reduce((sum, w) => sum + w.utilization, 0) / workers.length;
  const counts = o.log.streamCounts?.() ?? StreamCounts.of(o.log.streams()).snapshot();
  let streams = 0;
  for (const n of counts.values()) streams += n;
  const sessionsTotal = counts.get(SESSION_STREAMS_PREFIX) ?? 0;
  const logBytes = lmdbBytes(o.log, o.dataDir);
  return {
    daemon_id: o.daemonId,
    uptime_ms: Math.max(0, o.uptimeMs),
    sessions: o.sessions.loadedCount,
    sessions_total: sessionsTotal,
    quarantined: o.sessions.quarantinedSessions().size,
    writers: o.sessions.writerCounts(),
    pool: {
      threads: o.pool.size,
      ...(Number.isFinite(util) ? { utilization: Math.min(1, Math.max(0, util)) } : {}),
      workers: workers.map((w) => ({ host: w.host, thread_id: w.threadId, utilization: w.utilization, sessions: w.sessions, pending_calls: w.pendingCalls })),
      worker_exits: o.pool.exits,
    },
    log: { streams },
    rss_bytes: process.memoryUsage.rss(),
    ...(logBytes !== null ? { log_bytes: logBytes } : {}),
    ...(o.cluster !== null ? { cluster: o.cluster } : {}),
    serving: o.serving,
    ...(o.notServing !== null ? { not_serving: o.notServing } : {}),
  };
}

/** Size of the LMDB data file `<data>/events/data.mdb`; null for another log (in memory) or when it is not there. */
function lmdbBytes(log: EventLog, dataDir: string): number | null {
  if (!(log instanceof LmdbEventLog)) return null;
  try {
    return statSync(join(dataDir, 'events', 'data.mdb')).size;
  } catch {
    return null;
  }
}
