import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import type { EventLog } from '@baton/log-schema';
import { BatonDaemon, LmdbEventLog, type DaemonOptions } from '@baton/runtime';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { TEST_TAIL } from './conversation.ts';

/** A real nats-server, a loopback model, an LMDB log in a temp dir and a daemon on its own connection. */
export interface Harness {
  readonly nats: NatsServerHandle;
  readonly model: LoopbackModel;
  readonly dataDir: string;
  readonly log: LmdbEventLog;
  readonly daemon: BatonDaemon;
  readonly client: BatonClient;
  /** The client's own NATS connection (for raw requests). */
  readonly clientTransport: NatsTransport;
  stop(): Promise<void>;
}

/**
 * `modelTimeoutMs`: how long a writer's model call may take (default 10 s; a test that holds one longer raises it).
 * `wrapLog`: what the daemon gets in place of the LMDB log (a wrapper of it at the event-log port); `log` stays the
 * LMDB log itself.
 */
export async function startHarness(
  options: { poolSize?: number; mode?: 'extractive' | 'scripted'; modelTimeoutMs?: number; daemon?: Partial<DaemonOptions>; wrapLog?: (log: LmdbEventLog) => EventLog } = {},
): Promise<Harness> {
  const nats = await startNatsServer();
  const model = await startLoopbackModel({ mode: options.mode ?? 'extractive' });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-e2e-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const daemonTransport = await NatsTransport.connect({ servers: nats.url });
  const daemon = BatonDaemon.start({
    transport: daemonTransport,
    log: options.wrapLog?.(log) ?? log,
    dataDir,
    poolSize: options.poolSize ?? 2,
    model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: options.modelTimeoutMs ?? 10_000 },
    tail: TEST_TAIL,
    ...options.daemon,
  });
  const clientTransport = await NatsTransport.connect({ servers: nats.url });
  const client = new BatonClient(clientTransport);
  return {
    nats,
    model,
    dataDir,
    log,
    daemon,
    client,
    clientTransport,
    async stop() {
      await daemon.stop();
      await clientTransport.close();
      await daemonTransport.close();
      await log.close();
      await model.close();
      await nats.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
