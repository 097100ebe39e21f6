import { COMMON, CLUSTER, DAEMON, GATEWAY, HANDOFF, LISTING, NATS, REPLAY } from './flag-catalogue.ts';
import type { AnyFlag, FlagValues } from './flag.ts';

/**
 * Each command's flags, drawn from the catalogue; a command's options type is `FlagValues` of its list, so adding a
 * flag here is the whole declaration. Help lists them in this order.
 */

const NATS_CONNECTION = [NATS.nats, NATS.prefix, NATS.natsCreds, NATS.natsNkey, NATS.natsUser, NATS.natsTlsCa, NATS.natsTlsCert, NATS.natsTlsKey, NATS.natsInboxPrefix] as const;

/** What `baton daemon` and `baton up` both run: the daemon's workers, writers, residency, configuration and drain. */
const DAEMON_SETTINGS = [
  COMMON.dataDir,
  DAEMON.config,
  DAEMON.poolSize,
  DAEMON.workerHeapMb,
  DAEMON.writerModel,
  DAEMON.maxResidentSessions,
  DAEMON.idleUnload,
  DAEMON.maxQueuedRequests,
  DAEMON.drainTimeout,
  DAEMON.requireScopedSubjects,
  DAEMON.handoffTtl,
  COMMON.logLevel,
  COMMON.metrics,
] as const;

const GATEWAY_SETTINGS = [
  COMMON.host.help('address the gateway listens on'),
  COMMON.port.help('port the gateway listens on (0: any free port)').default(8787),
  GATEWAY.project,
  GATEWAY.contextWindow,
  GATEWAY.passthrough,
  GATEWAY.upstreamTimeout,
  GATEWAY.rebuiltContext,
  GATEWAY.resumeEmpty,
] as const;

export const DAEMON_FLAGS = [...NATS_CONNECTION, CLUSTER.cluster, CLUSTER.durability, CLUSTER.replicas, CLUSTER.lease, CLUSTER.forgetDead, ...DAEMON_SETTINGS] as const;

export const GATEWAY_FLAGS = [
  GATEWAY.upstream.required(),
  COMMON.dataDir.help("where the gateway keeps its session-ownership secret (gateway-owner.secret; share it with every gateway of the same daemon)"),
  ...NATS_CONNECTION,
  ...GATEWAY_SETTINGS,
  COMMON.logLevel,
  COMMON.metrics,
] as const;

export const UP_FLAGS = [
  GATEWAY.upstream.help('the provider agents talk to (default: OPENAI_BASE_URL)'),
  NATS.nats.optional().help('also serve the daemon on these NATS servers (comma-separated); without it, nothing leaves the process'),
  ...NATS_CONNECTION.slice(1),
  ...DAEMON_SETTINGS,
  ...GATEWAY_SETTINGS,
  GATEWAY.writerKey,
  GATEWAY.inspect,
] as const;

export const CLUSTER_STATUS_FLAGS = [...NATS_CONNECTION, COMMON.json.help('the status as JSON')] as const;

export const STATUS_FLAGS = [...NATS_CONNECTION, COMMON.json.help('the runtime.status reply as JSON'), COMMON.timeout] as const;

export const SESSIONS_FLAGS = [
  ...NATS_CONNECTION,
  COMMON.json.help('the runtime.sessions reply as JSON (without --limit: every page joined into one)'),
  LISTING.limit,
  LISTING.after,
  LISTING.project,
  COMMON.timeout.help('how long to wait for each reply (a bare number: milliseconds)'),
] as const;

export const HANDOFF_FLAGS = [
  ...NATS_CONNECTION,
  HANDOFF.to,
  HANDOFF.model,
  HANDOFF.window,
  HANDOFF.gateway,
  HANDOFF.wait,
  HANDOFF.ttl,
  COMMON.json.help('the handoff reply as JSON (with the base URL; the token is in it)'),
  COMMON.timeout.help('how long to wait for the daemon beyond --wait (a bare number: milliseconds)').default(60_000, '60s'),
] as const;

export const DEMO_FLAGS = [COMMON.dataDir, DAEMON.poolSize.help('worker threads')] as const;
export const DATA_DIR_FLAGS = [COMMON.dataDir] as const;
export const REPLAY_FLAGS = [COMMON.dataDir, COMMON.json.help('one JSON object per record (NDJSON); with --verify, the result as one JSON object'), REPLAY.verify] as const;
export const INSPECT_FLAGS = [
  COMMON.dataDir,
  COMMON.host.help('address to listen on (anything but loopback exposes every session)'),
  COMMON.port.default(0),
] as const;
export const MEMORY_LOG_FLAGS = [COMMON.dataDir, COMMON.json.help('the versions as one JSON object')] as const;

export type DaemonFlags = FlagValues<typeof DAEMON_FLAGS>;
export type GatewayFlags = FlagValues<typeof GATEWAY_FLAGS>;
export type UpFlags = FlagValues<typeof UP_FLAGS>;
export type ClusterStatusFlags = FlagValues<typeof CLUSTER_STATUS_FLAGS>;
export type StatusFlags = FlagValues<typeof STATUS_FLAGS>;
export type SessionsFlags = FlagValues<typeof SESSIONS_FLAGS>;
export type HandoffFlags = FlagValues<typeof HANDOFF_FLAGS>;
/** The NATS connection flags as every command that connects has them (`nats` given or defaulted). */
export type NatsFlags = FlagValues<typeof NATS_CONNECTION>;

export type { AnyFlag };
