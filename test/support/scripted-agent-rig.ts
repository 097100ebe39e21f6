import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll } from 'vitest';
import { startBatonUp, type BatonUp, type BatonUpOptions } from './baton-up.ts';

/**
 * What an end-to-end test of real agents through `baton up` stands on: a nats-server, the loopback model in scripted
 * mode, a scratch directory, a client of the daemon, and the `baton up` child the test starts (stopped after it).
 */
export interface ScriptedAgentRig {
  readonly nats: NatsServerHandle;
  readonly model: LoopbackModel;
  readonly scratch: string;
  readonly client: BatonClient;
  /** Starts `baton up` on the rig's NATS server and model; the rig stops it after the tests. */
  startUp(options: Omit<BatonUpOptions, 'natsUrl' | 'modelUrl'>): Promise<BatonUp>;
  /** Stops the `baton up` the test started: what it printed and how it exited. */
  stopUp(): ReturnType<BatonUp['stop']>;
}

/** Registers the rig's start and stop hooks for the enclosing `describe`; its fields are set once `beforeAll` ran. */
export function useScriptedAgentRig(scratchPrefix: string): ScriptedAgentRig {
  let up: BatonUp | undefined;
  let transport: NatsTransport | undefined;
  const rig = {
    startUp: async (options: Omit<BatonUpOptions, 'natsUrl' | 'modelUrl'>) => {
      up = await startBatonUp({ ...options, natsUrl: rig.nats.url, modelUrl: rig.model.url });
      return up;
    },
    stopUp: () => {
      const running = up;
      if (running === undefined) throw new Error('baton up was not started, or is stopped already');
      up = undefined;
      return running.stop();
    },
  } as { -readonly [K in keyof ScriptedAgentRig]: ScriptedAgentRig[K] };

  beforeAll(async () => {
    rig.nats = await startNatsServer();
    rig.model = await startLoopbackModel({ mode: 'scripted' });
    rig.scratch = await mkdtemp(join(tmpdir(), scratchPrefix));
    transport = await NatsTransport.connect({ servers: rig.nats.url });
    rig.client = new BatonClient(transport);
  });

  afterAll(async () => {
    await up?.stop();
    await transport?.close();
    await rig.model?.close();
    await rig.nats?.stop();
    if (rig.scratch !== undefined) await rm(rig.scratch, { recursive: true, force: true });
  });

  return rig;
}
