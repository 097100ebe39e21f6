/** The Baton daemon: event log adapters, actor hosts in worker threads, writer runs, recovery and replay. */
export { BatonDaemon, type DaemonOptions, type DaemonLogger, type ModelEndpoint } from './daemon/daemon.ts';
export type { WaitsConfig } from './daemon/waits.ts';
export type { DaemonObserver, RequestAnswer } from './daemon/daemon-observer.ts';
export { DaemonMetrics, type StatusSource } from './metrics/daemon-metrics.ts';
export { processMetrics } from './metrics/process-metrics.ts';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics/metrics-server.ts';
export type { Residency } from './daemon/session-service.ts';
export { systemClock, type Clock } from './time/clock.ts';
export { toProviderMessage } from './host/session-host.ts';
export { LmdbEventLog } from './event-log/lmdb-event-log.ts';
export { MemoryEventLog } from './event-log/memory-event-log.ts';
export { readTimeline, type SessionTimeline, type TimelineEntry } from './replay/read-timeline.ts';
export { verifySession, type VerifyResult } from './replay/verify-session.ts';
export { ReplayError } from './replay/replay-error.ts';
export { listSessions, sessionIds, type LiveSessions } from './daemon/session-list.ts';
export type { Divergence } from './replay/divergence.ts';
export { EventLogCommitJournal } from './memory/event-log-commit-journal.ts';
