import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BatonDaemon, DaemonMetrics, LmdbEventLog, PrefixInUseError, processMetrics, startMetricsServer, type MetricsServer, type Residency } from '@baton/runtime';
import { NatsTransport } from '@baton/client';
import { ProtocolError } from '@baton/protocol';
import type { CliIo } from '../cli-io.ts';
import { errorLine as message, shutdownSignal } from '../shutdown-signal.ts';
import { loadDaemonConfig, type DaemonConfig } from '../daemon/daemon-config.ts';
import type { MetricsAddress } from '../daemon/metrics-address.ts';
import { removeDaemonPid, writeDaemonPid } from '../daemon/daemon-pid-file.ts';
import { lockDataDir, type DataDirLock } from '../daemon/data-dir-lock.ts';
import { EnvError, anthropicEndpointFromEnv, checkpointDisabledFromEnv, modelEndpointFromEnv } from '../daemon/model-endpoint-env.ts';
import { createStderrLogger, daemonLoggerOf, type LogLevel } from '../daemon/pino-daemon-logger.ts';
import { clusterSettingsOf, type ClusterFlags } from '../daemon/cluster-flags.ts';
import { natsConnectionOptions, type NatsConnectionFlags } from '../daemon/nats-connection.ts';

export interface DaemonCommandOptions extends NatsConnectionFlags {
  readonly dataDir: string;
  readonly poolSize: number;
  /** Heap limit of each worker thread in MiB (`--worker-heap-mb`; default the runtime's). */
  readonly workerHeapMb?: number;
  /** Requests the daemon may have queued over all its sessions (`--max-queued-requests`; overrides the config file's). */
  readonly maxQueuedRequests?: number;
  readonly writerModel?: string;
  readonly prefix?: string;
  readonly logLevel: LogLevel;
  /** How long SIGTERM/SIGINT waits for running writers before cancelling them. */
  readonly drainTimeoutMs: number;
  /** When sessions leave memory (`--idle-unload`, `--max-resident-sessions`). */
  readonly residency?: Partial<Residency>;
  /** JSON configuration file: budgets, rebuild caps, tail policy. */
  readonly config?: string;
  /** Serve Prometheus metrics on `http://<host:port>/metrics`. */
  readonly metrics?: MetricsAddress;
  /** `--cluster`, `--durability`, `--replicas`, `--lease-ms`. */
  readonly clusterFlags?: ClusterFlags;
  /** `--require-scoped-subjects`: serve the project-scoped subjects only. */
  readonly requireScopedSubjects?: boolean;
}

/**
 * `baton daemon`: connects to NATS, opens the LMDB log in `<data>/events`, serves protocol v1 until SIGTERM/SIGINT
 * (with its pid in `<data>/daemon.pid`, see `runningDaemonPid`), then stops the daemon, closes the log and the
 * connection and returns 0. Configuration errors return 1 with one line on stderr, and so does a data directory
 * another process holds (its lock is taken before anything else is opened, and kept until the process ends).
 */
export async function runDaemon(options: DaemonCommandOptions, env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let model;
  let anthropic;
  try {
    model = modelEndpointFromEnv(env, options.writerModel);
    anthropic = anthropicEndpointFromEnv(env);
  } catch (err) {
    if (err instanceof EnvError) {
      io.err(`baton daemon: ${err.message}`);
      return 1;
    }
    throw err;
  }
  let connect;
  let cluster;
  try {
    connect = await natsConnectionOptions(options, env);
    cluster = clusterSettingsOf(options.clusterFlags ?? {});
  } catch (err) {
    io.err(`baton daemon: ${message(err)}`);
    return 1;
  }
  const dataDir = resolve(options.dataDir);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (err) {
    io.err(`baton daemon: ${message(err)}`);
    return 1;
  }
  const logger = createStderrLogger(options.logLevel);
  // Subscribe before the first await that could be interrupted, so an early SIGTERM still shuts down cleanly.
  const signal = shutdownSignal();
  let transport: NatsTransport;
  try {
    // In cluster mode the connection never gives up: a node that goes away is replaced by another one of the list.
    transport = await NatsTransport.connect({ ...connect, name: `baton-daemon-${process.pid}`, ...(cluster !== null ? { maxReconnectAttempts: -1 } : {}) });
  } catch (err) {
    io.err(`baton daemon: cannot connect to NATS at ${options.nats}: ${message(err)}`);
    signal.dispose();
    lock.release();
    return 1;
  }
  let log: LmdbEventLog;
  try {
    mkdirSync(join(dataDir, 'events'), { recursive: true });
    log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  } catch (err) {
    io.err(`baton daemon: cannot open the event log in ${join(dataDir, 'events')}: ${message(err)}`);
    await transport.close();
    signal.dispose();
    lock.release();
    return 1;
  }
  let config: DaemonConfig = {};
  try {
    if (options.config !== undefined) config = await loadDaemonConfig(options.config);
  } catch (err) {
    io.err(`baton daemon: ${message(err)}`);
    await log.close();
    await transport.close();
    signal.dispose();
    lock.release();
    return 1;
  }
  // Bound before the daemon starts, so a port in use fails start-up with nothing to undo but the log and connection.
  const metrics = options.metrics !== undefined ? new DaemonMetrics() : null;
  let metricsServer: MetricsServer | null = null;
  if (options.metrics !== undefined && metrics !== null) {
    try {
      metricsServer = await startMetricsServer({ ...options.metrics, registries: [processMetrics(), metrics.registry] });
    } catch (err) {
      io.err(`baton daemon: cannot serve metrics on ${options.metrics.host}:${options.metrics.port}: ${message(err)}`);
      await log.close();
      await transport.close();
      signal.dispose();
      lock.release();
      return 1;
    }
  }
  let daemon: BatonDaemon;
  try {
    daemon = BatonDaemon.start({
      ...config,
      transport,
      log,
      dataDir,
      poolSize: options.poolSize,
      ...(options.workerHeapMb !== undefined ? { workerResourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb } } : {}),
      model,
      anthropic,
      ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
      ...(options.requireScopedSubjects === true ? { requireScopedSubjects: true } : {}),
      checkpointDisabled: checkpointDisabledFromEnv(env),
      logger: daemonLoggerOf(logger),
      ...(options.residency !== undefined ? { residency: options.residency } : {}),
      ...(options.maxQueuedRequests !== undefined ? { requestQueue: { ...config.requestQueue, total: options.maxQueuedRequests } } : {}),
      ...(metrics !== null ? { observer: metrics } : {}),
      ...(cluster !== null ? { cluster: { ...cluster, connection: transport.connection } } : {}),
    });
  } catch (err) {
    io.err(`baton daemon: cannot start: ${message(err)}`);
    await metricsServer?.close();
    await log.close();
    await transport.close();
    signal.dispose();
    lock.release();
    return 1;
  }
  metrics?.watch(daemon);
  writeDaemonPid(dataDir);
  // Ready means served: start-up repair done, the cluster joined (which may wait for the cluster to come up) and the
  // subscriptions known to the server. A signal meanwhile stops the daemon at once.
  const failed = daemon.failed();
  const first = await Promise.race([
    daemon.ready().then(
      () => null,
      (err: unknown) => (err instanceof PrefixInUseError ? err : null),
    ),
    signal.received,
    failed,
  ]);
  if (first === null) {
    await transport.flush().catch(() => {});
    logger.info({ daemonId: daemon.id, nats: options.nats, dataDir, pool: options.poolSize, prefix: daemon.subjects.prefix, cluster }, 'daemon started');
    if (metricsServer !== null) io.out(`baton daemon metrics: ${metricsServer.url}`);
    const mode = cluster === null ? '' : ` cluster=${cluster.durability ?? 'local'} id=${daemon.id}`;
    io.out(`baton daemon ready nats=${options.nats} data=${dataDir} pool=${options.poolSize} pid=${process.pid}${mode}`);
  }
  const received = first ?? (await Promise.race([signal.received, failed]));
  if (received instanceof PrefixInUseError || received instanceof ProtocolError) {
    // Another daemon serves these subjects and this one is not in cluster mode (it served nothing), or its worker
    // threads cannot start: it says why and stops.
    io.err(`baton daemon: ${first === null ? 'stopping' : 'refusing to start'}: ${received.message}`);
    await daemon.stop();
    await log.close();
    removeDaemonPid(dataDir);
    await transport.close();
    await metricsServer?.close();
    signal.dispose();
    lock.release();
    return 1;
  }
  logger.info({ signal: received, drainTimeoutMs: options.drainTimeoutMs }, 'draining');
  const report = await daemon.stop({ drainTimeoutMs: options.drainTimeoutMs });
  logger.info(report, 'drained');
  await log.close();
  removeDaemonPid(dataDir);
  await transport.close();
  await metricsServer?.close();
  lock.release();
  logger.info('stopped');
  return 0;
}
