import { BatonClient } from '@baton/client';
import { resolve } from 'node:path';
import { BatonGateway, GatewayMetrics, loadOwnerSecret } from '@baton/gateway';
import { processMetrics, startMetricsServer, type MetricsServer } from '@baton/runtime';
import type { CliIo } from '../cli-io.ts';
import { createStderrLogger, daemonLoggerOf } from '../daemon/pino-daemon-logger.ts';
import { connectNats } from '../daemon/nats-connection.ts';
import { EXIT } from '../exit-codes.ts';
import type { GatewayFlags } from '../flags/command-flags.ts';
import { errorLine, shutdownSignal } from '../shutdown-signal.ts';

/** `baton gateway`'s options: its flags as parsed. */
export type GatewayCommandOptions = GatewayFlags;

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
  const transport = await connectNats('gateway', options, env, io, { name: `baton-gateway-${process.pid}` });
  if (typeof transport === 'number') return transport;
  const logger = createStderrLogger(options.logLevel);
  const signal = shutdownSignal();
  const metrics = options.metrics !== undefined ? new GatewayMetrics() : null;
  let metricsServer: MetricsServer | null = null;
  if (options.metrics !== undefined && metrics !== null) {
    try {
      metricsServer = await startMetricsServer({ ...options.metrics, registries: [processMetrics(), metrics.registry] });
    } catch (err) {
      io.err(`baton gateway: cannot serve metrics on ${options.metrics.host}:${options.metrics.port}: ${errorLine(err)}`);
      await transport.close();
      signal.dispose();
      return EXIT.failed;
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
      ...(options.upstreamTimeout !== undefined ? { upstreamTimeoutMs: options.upstreamTimeout } : {}),
      rebuiltContext: options.rebuiltContext,
      ...(options.resumeEmpty === true ? { resumeEmpty: true } : {}),
      logger: daemonLoggerOf(logger),
      ...(metrics !== null ? { metrics } : {}),
    });
  } catch (err) {
    io.err(`baton gateway: cannot start on ${options.host}:${options.port}: ${errorLine(err)}`);
    await metricsServer?.close();
    await transport.close();
    signal.dispose();
    return EXIT.failed;
  }
  logger.info({ upstream: options.upstream, nats: options.nats, baseURL: gateway.baseURL }, 'gateway started');
  for (const line of agentHint(gateway.baseURL)) io.out(line);
  if (metricsServer !== null) io.out(`metrics: ${metricsServer.url}`);
  await signal.received;
  await gateway.close();
  await transport.close();
  await metricsServer?.close();
  return EXIT.ok;
}
