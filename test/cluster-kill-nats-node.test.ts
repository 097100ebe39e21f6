import { BatonClient } from '@baton/client';
import { clusterNames, readClusterStatus } from '@baton/runtime';
import { describe, expect, it } from 'vitest';
import { SessionLoad, historyIds, replicatedHistory, useClusterRig, writersSettled } from './support/cluster-rig.ts';

const SESSIONS = 30;
const LEASE_MS = 2_000;

describe('three daemons (separate processes, durability replicated, R3) on a 3-node NATS cluster: one nats-server node is SIGKILLed under load', () => {
  const rig = useClusterRig({ leaseMs: LEASE_MS });

  it('keeps serving every session (its daemon reconnects to another node) and loses no acknowledged append', { timeout: 90_000 }, async () => {
    const client = new BatonClient(rig.transport, { timeoutMs: 5_000, failover: { timeoutMs: 45_000 } });
    const load = new SessionLoad(client, 'n');
    await load.open(SESSIONS);
    await load.turns(0, 5);
    expect(await writersSettled(client, load.sessions, 60_000)).toBe(SESSIONS);

    const node = rig.nats.nodes[0];
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
    // What `baton cluster status` shows: the log's three replicas, a leader among the survivors, the dead node offline
    // or not current; every session owned by a live daemon.
    const status = await readClusterStatus(rig.transport.connection, clusterNames(), Date.now);
    const replicas = status.log?.replicas ?? [];
    expect(replicas).toHaveLength(3);
    expect(replicas.find((r) => r.leader)?.server).not.toBe(node.name);
    expect(replicas.find((r) => r.server === node.name)).toMatchObject({ leader: false });
    expect(replicas.find((r) => r.server === node.name)?.current === false || replicas.find((r) => r.server === node.name)?.offline === true).toBe(true);
    const live = new Set(rig.daemons.map((d) => d.daemonId));
    for (const sid of load.sessions) expect(live.has(status.sessions.find((s) => s.sessionId === sid)?.daemonId ?? '')).toBe(true);
    console.log(
      `SIGKILL of nats node ${node.name} ${((killedAt - started) / 1000).toFixed(1)} s into the load: ${compared} acknowledged ids compared, all in the ` +
        `replicated logs (read through the two surviving nodes); the load finished ${((finishedAt - killedAt) / 1000).toFixed(1)} s after the kill (${(elapsed / 1000).toFixed(1)} s in all)`,
    );
  });
});
