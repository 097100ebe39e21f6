import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BatonDaemon, DaemonMetrics, LmdbEventLog, PrefixInUseError, processMetrics, startMetricsServer, type MetricsServer } from '@baton/runtime';
import { ProtocolError } from '@baton/protocol';
import type { CliIo } from '../cli-io.ts';
import { errorLine as message, shutdownSignal } from '../shutdown-signal.ts';
import { loadDaemonConfig, type DaemonConfig } from '../daemon/daemon-config.ts';
import { removeDaemonPid, writeDaemonPid } from '../daemon/daemon-pid-file.ts';
import { lockDataDir, type DataDirLock } from '../daemon/data-dir-lock.ts';
import { EnvError, anthropicEndpointFromEnv, checkpointDisabledFromEnv, modelEndpointFromEnv } from '../daemon/model-endpoint-env.ts';
import { createStderrLogger, daemonLoggerOf } from '../daemon/pino-daemon-logger.ts';
import { clusterSettingsOf, type ClusterFlagSpelling } from '../daemon/cluster-flags.ts';
import { connectNats } from '../daemon/nats-connection.ts';
import { EXIT } from '../exit-codes.ts';
import type { DaemonFlags } from '../flags/command-flags.ts';

/** `baton daemon`'s options: its flags as parsed, and how the command line spelled the renamed ones. */
export type DaemonCommandOptions = DaemonFlags & { readonly spelled?: ClusterFlagSpelling };

/**
 * `baton daemon`: connects to NATS, opens the LMDB log in `<data>/events`, serves protocol v1 until SIGTERM/SIGINT
 * (with its pid in `<data>/daemon.pid`, see `runningDaemonPid`), then stops the daemon, closes the log and the
 * connection and returns 0. Configuration errors return 1 with one line on stderr, and so does a data directory
 * another process holds (its lock is taken before anything else is opened, and kept until the process ends); a NATS
 * server it cannot connect to returns 2 (see `EXIT`).
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
      return EXIT.failed;
    }
    throw err;
  }
  let cluster;
  try {
    cluster = clusterSettingsOf(options, options.spelled);
  } catch (err) {
    io.err(`baton daemon: ${message(err)}`);
    return EXIT.failed;
  }
  const dataDir = resolve(options.dataDir);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (err) {
    io.err(`baton daemon: ${message(err)}`);
    return EXIT.failed;
  }
  const logger = createStderrLogger(options.logLevel);
  // Subscribe before the first await that could be interrupted, so an early SIGTERM still shuts down cleanly.
  const signal = shutdownSignal();
  // In cluster mode the connection never gives up: a node that goes away is replaced by another one of the list.
  const transport = await connectNats('daemon', options, env, io, { name: `baton-daemon-${process.pid}`, ...(cluster !== null ? { maxReconnectAttempts: -1 } : {}) });
  if (typeof transport === 'number') {
    signal.dispose();
    lock.release();
    return transport;
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
    return EXIT.failed;
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
    return EXIT.failed;
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
      return EXIT.failed;
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
      residency: { idleMs: options.idleUnload, ...(options.maxResidentSessions !== undefined ? { maxResident: options.maxResidentSessions } : {}) },
      ...(options.maxQueuedRequests !== undefined ? { requestQueue: { ...config.requestQueue, total: options.maxQueuedRequests } } : {}),
      ...(options.handoffTtl !== undefined ? { handoffTtlMs: options.handoffTtl } : {}),
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
    return EXIT.failed;
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
    return EXIT.failed;
  }
  logger.info({ signal: received, drainTimeoutMs: options.drainTimeout }, 'draining');
  const report = await daemon.stop({ drainTimeoutMs: options.drainTimeout });
  logger.info(report, 'drained');
  await log.close();
  removeDaemonPid(dataDir);
  await transport.close();
  await metricsServer?.close();
  lock.release();
  logger.info('stopped');
  return EXIT.ok;
}
