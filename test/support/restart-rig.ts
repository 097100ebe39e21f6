import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonDaemon, LmdbEventLog, type DaemonOptions } from '@baton/runtime';
import type { EventLog } from '@baton/log-schema';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { TEST_TAIL } from './conversation.ts';

/** An in-process daemon of a {@link RestartRig}, with the LMDB log it opened. */
export interface RunningDaemon {
  readonly daemon: BatonDaemon;
  readonly log: LmdbEventLog;
}

/**
 * A real nats-server, a loopback model and a data dir whose daemon can be stopped and started again (each start opens
 * the LMDB log afresh, as a new process would); between runs the log can be opened directly with {@link withLog}.
 */
export interface RestartRig {
  readonly nats: NatsServerHandle;
  readonly model: LoopbackModel;
  readonly dataDir: string;
  readonly client: BatonClient;
  /** The daemon running now (throws when none runs). */
  readonly current: RunningDaemon;
  /** Starts a daemon on the data dir; `wrapLog` may put an `EventLog` decorator between the daemon and LMDB. */
  start(options?: { daemon?: Partial<DaemonOptions>; wrapLog?: (log: LmdbEventLog) => EventLog }): Promise<RunningDaemon>;
  /** Stops the running daemon and closes its log. */
  stopDaemon(): Promise<void>;
  /** Opens the log while no daemon runs, hands it to `fn`, closes it. */
  withLog<T>(fn: (log: LmdbEventLog) => Promise<T> | T): Promise<T>;
  close(): Promise<void>;
}

export async function startRestartRig(options: { poolSize?: number; daemon?: Partial<DaemonOptions> } = {}): Promise<RestartRig> {
  const nats = await startNatsServer();
  const model = await startLoopbackModel({ mode: 'extractive' });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-restart-'));
  const clientTransport = await NatsTransport.connect({ servers: nats.url });
  const client = new BatonClient(clientTransport, { timeoutMs: 20_000 });
  const eventsPath = join(dataDir, 'events');
  let running: (RunningDaemon & { transport: NatsTransport }) | null = null;

  const rig: RestartRig = {
    nats,
    model,
    dataDir,
    client,
    get current(): RunningDaemon {
      if (running === null) throw new Error('no daemon is running');
      return running;
    },
    async start(startOptions = {}) {
      if (running !== null) throw new Error('a daemon is already running');
      const log = LmdbEventLog.open({ path: eventsPath });
      const transport = await NatsTransport.connect({ servers: nats.url });
      const daemon = BatonDaemon.start({
        transport,
        log: startOptions.wrapLog?.(log) ?? log,
        dataDir,
        poolSize: options.poolSize ?? 2,
        model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 20_000 },
        tail: TEST_TAIL,
        ...options.daemon,
        ...startOptions.daemon,
      });
      await daemon.ready();
      await transport.flush();
      running = { daemon, log, transport };
      return running;
    },
    async stopDaemon() {
      if (running === null) return;
      const { daemon, log, transport } = running;
      running = null;
      await daemon.stop();
      await transport.close();
      await log.close();
    },
    async withLog(fn) {
      if (running !== null) throw new Error('stop the daemon before opening its log');
      const log = LmdbEventLog.open({ path: eventsPath });
      try {
        return await fn(log);
      } finally {
        await log.close();
      }
    },
    async close() {
      await rig.stopDaemon();
      await clientTransport.close();
      await model.close();
      await nats.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return rig;
}
