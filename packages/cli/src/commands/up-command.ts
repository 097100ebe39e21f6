import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BatonClient, MemoryBus, type Transport } from '@baton/client';
import { BatonGateway, GatewayMetrics, loadOwnerSecret } from '@baton/gateway';
import { InspectorData, startInspector, type InspectorServer } from '@baton/inspector';
import { BatonDaemon, DaemonMetrics, LmdbEventLog, PrefixInUseError, processMetrics, startMetricsServer, type MetricsServer } from '@baton/runtime';
import { ProtocolError } from '@baton/protocol';
import type { CliIo } from '../cli-io.ts';
import { removeDaemonPid, writeDaemonPid } from '../daemon/daemon-pid-file.ts';
import { lockDataDir, type DataDirLock } from '../daemon/data-dir-lock.ts';
import { EnvError, anthropicEndpointFromEnv, checkpointDisabledFromEnv, modelEndpointFromEnv } from '../daemon/model-endpoint-env.ts';
import { loadDaemonConfig, type DaemonConfig } from '../daemon/daemon-config.ts';
import { createStderrLogger, daemonLoggerOf } from '../daemon/pino-daemon-logger.ts';
import { connectNats } from '../daemon/nats-connection.ts';
import { EXIT } from '../exit-codes.ts';
import type { UpFlags } from '../flags/command-flags.ts';
import { errorLine, shutdownSignal } from '../shutdown-signal.ts';
import { agentHint } from './gateway-command.ts';

/**
 * `baton up`'s options: its flags as parsed. `writerKey` says whose key writers call the model with: `daemon`
 * (`OPENAI_API_KEY` / `ANTHROPIC_API_KEY`, the default) or `agent` (the key of the session's latest call the upstream
 * accepted, held in memory only; the daemon's until there is one).
 */
export type UpCommandOptions = UpFlags;

/** Whose API key the writers of `baton up` use. */
export type WriterKeySource = UpFlags['writerKey'];

/**
 * `baton up`: the daemon and the gateway in one process — an in-process transport (or `--nats`), the event log and
 * memory in `--data-dir` — and the base URL to give an agent. Runs until SIGTERM/SIGINT. Like `baton daemon` it holds
 * the data directory's lock for its whole life, and refuses to start (1) when another process holds it; a NATS server
 * it cannot connect to (with `--nats`) is 2, as everywhere (see `EXIT`).
 */
export async function runUp(options: UpCommandOptions, env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let model;
  let anthropic;
  try {
    model = modelEndpointFromEnv(env, options.writerModel);
    anthropic = anthropicEndpointFromEnv(env);
  } catch (err) {
    if (!(err instanceof EnvError)) throw err;
    io.err(`baton up: ${err.message} (writers call it; the gateway forwards agents to --upstream, default the same URL)`);
    return EXIT.failed;
  }
  let config: DaemonConfig = {};
  try {
    if (options.config !== undefined) config = await loadDaemonConfig(options.config);
  } catch (err) {
    io.err(`baton up: ${errorLine(err)}`);
    return EXIT.failed;
  }
  const upstream = options.upstream ?? model.baseURL;
  const dataDir = resolve(options.dataDir);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (err) {
    io.err(`baton up: ${errorLine(err)}`);
    return EXIT.failed;
  }
  const logger = createStderrLogger(options.logLevel);
  const signal = shutdownSignal();
  let daemonTransport: Transport;
  let clientTransport: Transport;
  if (options.nats === undefined) {
    const bus = new MemoryBus();
    daemonTransport = bus.connect();
    clientTransport = bus.connect();
  } else {
    const flags = { ...options, nats: options.nats };
    const daemonSide = await connectNats('up', flags, env, io, { name: `baton-up-${process.pid}` });
    const clientSide = typeof daemonSide === 'number' ? daemonSide : await connectNats('up', flags, env, io, { name: `baton-up-gateway-${process.pid}` });
    if (typeof daemonSide === 'number' || typeof clientSide === 'number') {
      if (typeof daemonSide !== 'number') await daemonSide.close();
      signal.dispose();
      lock.release();
      return typeof daemonSide === 'number' ? daemonSide : (clientSide as number);
    }
    daemonTransport = daemonSide;
    clientTransport = clientSide;
  }
  const metrics = options.metrics !== undefined ? { daemon: new DaemonMetrics(), gateway: new GatewayMetrics() } : null;
  let metricsServer: MetricsServer | null = null;
  if (options.metrics !== undefined && metrics !== null) {
    try {
      metricsServer = await startMetricsServer({ ...options.metrics, registries: [processMetrics(), metrics.daemon.registry, metrics.gateway.registry] });
    } catch (err) {
      io.err(`baton up: cannot serve metrics on ${options.metrics.host}:${options.metrics.port}: ${errorLine(err)}`);
      await clientTransport.close();
      await daemonTransport.close();
      signal.dispose();
      lock.release();
      return EXIT.failed;
    }
  }
  mkdirSync(join(dataDir, 'events'), { recursive: true });
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  let daemon: BatonDaemon;
  try {
    daemon = BatonDaemon.start({
      ...config,
      transport: daemonTransport,
      log,
      dataDir,
      poolSize: options.poolSize,
      ...(options.workerHeapMb !== undefined ? { workerResourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb } } : {}),
      ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
      ...(options.requireScopedSubjects === true ? { requireScopedSubjects: true } : {}),
      residency: { idleMs: options.idleUnload, ...(options.maxResidentSessions !== undefined ? { maxResident: options.maxResidentSessions } : {}) },
      ...(options.maxQueuedRequests !== undefined ? { requestQueue: { ...config.requestQueue, total: options.maxQueuedRequests } } : {}),
      ...(options.handoffTtl !== undefined ? { handoffTtlMs: options.handoffTtl } : {}),
      model,
      anthropic,
      checkpointDisabled: checkpointDisabledFromEnv(env),
      logger: daemonLoggerOf(logger),
      ...(metrics !== null ? { observer: metrics.daemon } : {}),
    });
  } catch (err) {
    // The configuration's budgets and caps are checked here (the key is named), as under `baton daemon`.
    io.err(`baton up: cannot start: ${errorLine(err)}`);
    await log.close();
    await clientTransport.close();
    await daemonTransport.close();
    await metricsServer?.close();
    signal.dispose();
    lock.release();
    return EXIT.failed;
  }
  metrics?.daemon.watch(daemon);
  writeDaemonPid(dataDir);
  let gateway: BatonGateway | null = null;
  let inspector: InspectorServer | null = null;
  /** Stops everything started so far, the last started first. */
  const stopAll = async (drainTimeoutMs?: number): Promise<void> => {
    await inspector?.close();
    await gateway?.close();
    await daemon.stop(drainTimeoutMs !== undefined ? { drainTimeoutMs } : undefined);
    await clientTransport.close();
    await daemonTransport.close();
    await log.close();
    await metricsServer?.close();
    removeDaemonPid(dataDir);
    lock.release();
  };
  try {
    await daemon.ready();
    gateway = await BatonGateway.start({
      upstream,
      // Anthropic Messages calls go where the writers of their sessions go, when that is configured.
      ...(anthropic !== null ? { anthropicUpstream: anthropic.baseURL } : {}),
      client: new BatonClient(clientTransport, { ...(options.prefix !== undefined ? { prefix: options.prefix } : {}) }),
      ownerSecret: loadOwnerSecret(dataDir),
      recordingStalled: (sessionId: string, stalled: boolean) => daemon.sessions.setRecordingStalled(sessionId, stalled),
      host: options.host,
      port: options.port,
      projectId: options.project,
      ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
      ...(options.passthrough !== undefined ? { passthrough: options.passthrough } : {}),
      ...(options.upstreamTimeout !== undefined ? { upstreamTimeoutMs: options.upstreamTimeout } : {}),
      rebuiltContext: options.rebuiltContext,
      ...(options.resumeEmpty === true ? { resumeEmpty: true } : {}),
      logger: daemonLoggerOf(logger),
      ...(metrics !== null ? { metrics: metrics.gateway } : {}),
      ...(options.writerKey === 'agent' ? { writerKeys: (sessionId: string, key: string) => daemon.sessions.setWriterKey(sessionId, key) } : {}),
    });
  } catch (err) {
    // Another daemon serves the default prefix on this NATS: this one would split sessions with it.
    if (err instanceof PrefixInUseError) io.err(`baton up: refusing to start: ${err.message}`);
    else io.err(`baton up: cannot start the gateway on ${options.host}:${options.port}: ${errorLine(err)}`);
    await stopAll();
    signal.dispose();
    return EXIT.failed;
  }
  if (options.inspect !== undefined) {
    try {
      inspector = await startInspector({ dataDir, data: InspectorData.over(dataDir, log), host: options.inspect.host, port: options.inspect.port });
    } catch (err) {
      io.err(`baton up: cannot serve the inspector on ${options.inspect.host}:${options.inspect.port}: ${errorLine(err)}`);
      await stopAll();
      signal.dispose();
      return EXIT.failed;
    }
  }
  io.out(`baton up: daemon and gateway ready (data ${dataDir}, upstream ${upstream}${anthropic !== null ? `, Anthropic Messages ${anthropic.baseURL}` : ''}${options.nats !== undefined ? `, NATS ${options.nats}` : ''}${options.writerKey === 'agent' ? ", writers use each agent's key" : ''})`);
  for (const line of agentHint(gateway.baseURL)) io.out(line);
  if (metricsServer !== null) io.out(`metrics: ${metricsServer.url}`);
  if (inspector !== null) io.out(`inspector: ${inspector.url} (read-only)`);
  const received = await Promise.race([signal.received, daemon.failed()]);
  if (received instanceof ProtocolError) {
    // The daemon's worker threads died and the replacements cannot start: it cannot serve, so up says why and stops.
    io.err(`baton up: stopping: ${received.message}`);
    await stopAll();
    signal.dispose();
    return EXIT.failed;
  }
  // SIGTERM/SIGINT: running writers get --drain-timeout to settle, as under `baton daemon`.
  await stopAll(options.drainTimeout);
  return EXIT.ok;
}
