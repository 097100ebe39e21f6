import { rm } from 'node:fs/promises';
import { BatonClient, NatsTransport } from '@baton/client';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL, SYSTEM_PROMPT } from './support/conversation.ts';
import { spawnDaemons, type DaemonChild } from './support/cluster-rig.ts';

/*
 * A paused cluster member (SIGSTOP: a GC pause, a frozen VM) stays in the `open` queue group and holds what reaches
 * it. With `openAttemptTimeoutMs`, a client's open (new or of a session the paused daemon held) is given up on there
 * and tried again, reaching the live daemon: every open succeeds within the client's failover time, which is shorter
 * than its request timeout — an open left waiting on the paused daemon would fail the call.
 */

const LEASE_MS = 1_500;

describe('opens while a cluster member is paused', { timeout: 120_000 }, () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  let daemons: DaemonChild[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    model = await startLoopbackModel({ mode: 'extractive' });
    const config = { servers: [nats.url], baseURL: model.baseURL, leaseMs: LEASE_MS, durability: 'replicated' as const, replicas: 1 };
    daemons = await spawnDaemons([config, config]);
  }, 60_000);

  afterAll(async () => {
    for (const d of daemons) {
      await d.stop();
      await rm(d.dataDir, { recursive: true, force: true });
    }
    await model?.close();
    await nats?.stop();
  });

  it('new sessions and sessions of the paused daemon are opened by the live one, never waiting out the request timeout', async () => {
    const transport = await NatsTransport.connect({ servers: nats.url });
    try {
      // The request timeout is above the whole failover time: only the open's own attempt timeout lets a call that
      // first reached the paused daemon succeed.
      const client = new BatonClient(transport, { timeoutMs: 60_000, failover: { timeoutMs: 20_000, openAttemptTimeoutMs: 500, attemptTimeoutMs: 1_000, delayMs: 50 } });
      const before: string[] = [];
      for (let i = 0; i < 6; i++) {
        const opened = await client.open({ project_id: 'pause', model: MODEL, system: SYSTEM_PROMPT });
        await client.append(opened.session_id, [{ id: `m${i}`, role: 'user', content: 'hello' }]);
        before.push(opened.session_id);
      }
      const [paused, live] = [...daemons].sort((x, y) => y.held().size - x.held().size) as [DaemonChild, DaemonChild];
      const moved = before.filter((sid) => paused.held().has(sid));
      expect(moved.length).toBeGreaterThan(0);

      paused.signal('SIGSTOP');
      const latencies: number[] = [];
      const fresh: string[] = [];
      try {
        for (let i = 0; i < 8; i++) {
          const started = performance.now();
          const opened = await client.open({ project_id: 'pause', model: MODEL, system: SYSTEM_PROMPT });
          latencies.push(performance.now() - started);
          fresh.push(opened.session_id);
          expect(opened.resumed).toBe(false);
        }
        for (const sid of moved) {
          const started = performance.now();
          // The append's daemon is paused: the client gives up on it, opens the session again (on the live daemon,
          // once the paused one's lease expired) and repeats the append.
          expect((await client.append(sid, [{ id: `after-${sid}`, role: 'user', content: 'still there?' }])).accepted).toBe(1);
          latencies.push(performance.now() - started);
        }
        for (const sid of [...fresh, ...moved]) await live.event((ev) => ev.ev === 'claimed' && ev.sessionId === sid);
      } finally {
        paused.signal('SIGCONT');
      }
      const sorted = [...latencies].sort((x, y) => x - y);
      console.log(
        `paused member: ${fresh.length} new opens and ${moved.length} moved sessions served by the live daemon; latency p50 ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms (lease ${LEASE_MS} ms)`,
      );
    } finally {
      await transport.close();
    }
  });
});
