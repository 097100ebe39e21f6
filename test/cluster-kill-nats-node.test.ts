import { BatonClient } from '@baton/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionLoad, historyIds, replicatedHistory, startClusterRig, writersSettled, type ClusterRig } from './support/cluster-rig.ts';

const SESSIONS = 30;
const LEASE_MS = 2_000;

describe('three daemons (separate processes, durability replicated, R3) on a 3-node NATS cluster: one nats-server node is SIGKILLed under load', () => {
  let rig: ClusterRig;

  beforeAll(async () => {
    rig = await startClusterRig(LEASE_MS);
  }, 60_000);

  afterAll(async () => {
    await rig?.stop();
  });

  it('keeps serving every session (its daemon reconnects to another node) and loses no acknowledged append', { timeout: 90_000 }, async () => {
    const client = new BatonClient(rig.transport, { timeoutMs: 5_000, failover: { timeoutMs: 45_000 } });
    const load = new SessionLoad(client, 'n');
    await load.open(SESSIONS);
    await load.turns(0, 5);
    expect(await writersSettled(client, load.sessions, 60_000)).toBe(SESSIONS);

    const node = rig.cluster.nodes[0];
    if (node === undefined) throw new Error('no node');
    let acks = 0;
    let killedAt = 0;
    let killed: Promise<void> = Promise.resolve();
    const started = performance.now();
    await load.turns(5, 9, () => {
      if (++acks !== SESSIONS) return;
      killedAt = performance.now();
      killed = node.kill('SIGKILL');
    });
    await killed;
    await load.turns(9, 11);
    const finishedAt = performance.now();
    const elapsed = finishedAt - started;
    expect(load.failures).toEqual([]);
    expect(node.running).toBe(false);

    let compared = 0;
    for (const sid of load.sessions) {
      const ids = historyIds(await replicatedHistory(rig.transport.connection, sid, 3), sid);
      const acked = load.acked.get(sid) ?? new Set<string>();
      expect([...acked].filter((id) => !ids.has(id))).toEqual([]);
      compared += acked.size;
      expect((await client.status(sid)).state.tokens).toBeGreaterThan(0);
    }
    expect(compared).toBe(SESSIONS * 44);
    console.log(
      `SIGKILL of nats node ${node.name} ${((killedAt - started) / 1000).toFixed(1)} s into the load: ${compared} acknowledged ids compared, all in the ` +
        `replicated logs (read through the two surviving nodes); the load finished ${((finishedAt - killedAt) / 1000).toFixed(1)} s after the kill (${(elapsed / 1000).toFixed(1)} s in all)`,
    );
  });
});
