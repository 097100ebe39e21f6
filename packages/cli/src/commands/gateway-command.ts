import { BatonClient, NatsTransport } from '@baton/client';
import { resolve } from 'node:path';
import { BatonGateway, GatewayMetrics, loadOwnerSecret } from '@baton/gateway';
import { processMetrics, startMetricsServer, type MetricsServer } from '@baton/runtime';
import type { CliIo } from '../cli-io.ts';
import type { MetricsAddress } from '../daemon/metrics-address.ts';
import { createStderrLogger, daemonLoggerOf, type LogLevel } from '../daemon/pino-daemon-logger.ts';
import { NatsOptionError, natsConnectionOptions, type NatsConnectionFlags } from '../daemon/nats-connection.ts';
import { errorLine, shutdownSignal } from '../shutdown-signal.ts';

export interface GatewayCommandOptions extends NatsConnectionFlags {
  readonly upstream: string;
  /** Where the gateway keeps its ownership secret (`gateway-owner.secret`, created at first start). */
  readonly dataDir: string;
  readonly prefix?: string;
  readonly host: string;
  readonly port: number;
  readonly project: string;
  readonly contextWindow?: number;
  /** Path prefixes forwarded besides the provider API paths. */
  readonly passthrough?: readonly string[];
  /** How long the upstream may take to start its reply and between parts of it (default 10 min). */
  readonly upstreamTimeoutMs?: number;
  /** What rebuilt contexts may refer to (default `auto`). */
  readonly rebuiltContext?: 'auto' | 'local' | 'remote';
  readonly logLevel: LogLevel;
  /** Serve the gateway's Prometheus metrics on `http://<host:port>/metrics`. */
  readonly metrics?: MetricsAddress;
}

/** How to point an agent at a running gateway. */
export function agentHint(baseURL: string): string[] {
  const named = baseURL.replace(/\/v1$/, '/s/<session>/v1');
  return [
    `OpenAI-compatible base URL: ${baseURL}`,
    `  name a session in it to keep one conversation per session: ${named}`,
    '  the agent keeps its own API key; requests go to the upstream with it',
  ];
}

/**
 * `baton gateway`: an HTTP server agents use as their model base URL, forwarding to `--upstream` and recording their
 * conversations in the daemon reached over NATS. Runs until SIGTERM/SIGINT.
 */
export async function runGateway(options: GatewayCommandOptions, io: CliIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let connect;
  try {
    connect = await natsConnectionOptions(options, env);
  } catch (err) {
    if (!(err instanceof NatsOptionError)) throw err;
    io.err(`baton gateway: ${err.message}`);
    return 1;
  }
  const logger = createStderrLogger(options.logLevel);
  const signal = shutdownSignal();
  let transport: NatsTransport;
  try {
    transport = await NatsTransport.connect({ ...connect, name: `baton-gateway-${process.pid}` });
  } catch (err) {
    io.err(`baton gateway: cannot connect to NATS at ${options.nats}: ${errorLine(err)}`);
    signal.dispose();
    return 1;
  }
  const metrics = options.metrics !== undefined ? new GatewayMetrics() : null;
  let metricsServer: MetricsServer | null = null;
  if (options.metrics !== undefined && metrics !== null) {
    try {
      metricsServer = await startMetricsServer({ ...options.metrics, registries: [processMetrics(), metrics.registry] });
    } catch (err) {
      io.err(`baton gateway: cannot serve metrics on ${options.metrics.host}:${options.metrics.port}: ${errorLine(err)}`);
      await transport.close();
      signal.dispose();
      return 1;
    }
  }
  let gateway: BatonGateway;
  try {
    gateway = await BatonGateway.start({
      ownerSecret: loadOwnerSecret(resolve(options.dataDir)),
      upstream: options.upstream,
      client: new BatonClient(transport, { ...(options.prefix !== undefined ? { prefix: options.prefix } : {}) }),
      host: options.host,
      port: options.port,
      projectId: options.project,
      ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
      ...(options.passthrough !== undefined ? { passthrough: options.passthrough } : {}),
      ...(options.upstreamTimeoutMs !== undefined ? { upstreamTimeoutMs: options.upstreamTimeoutMs } : {}),
      ...(options.rebuiltContext !== undefined ? { rebuiltContext: options.rebuiltContext } : {}),
      logger: daemonLoggerOf(logger),
      ...(metrics !== null ? { metrics } : {}),
    });
  } catch (err) {
    io.err(`baton gateway: cannot start on ${options.host}:${options.port}: ${errorLine(err)}`);
    await metricsServer?.close();
    await transport.close();
    signal.dispose();
    return 1;
  }
  logger.info({ upstream: options.upstream, nats: options.nats, baseURL: gateway.baseURL }, 'gateway started');
  for (const line of agentHint(gateway.baseURL)) io.out(line);
  if (metricsServer !== null) io.out(`metrics: ${metricsServer.url}`);
  await signal.received;
  await gateway.close();
  await transport.close();
  await metricsServer?.close();
  return 0;
}
