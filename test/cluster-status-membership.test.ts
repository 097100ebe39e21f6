import { BatonClient } from '@baton/client';
import { clusterNames, readClusterStatus } from '@baton/runtime';
import { describe, expect, it } from 'vitest';
import { MODEL, SYSTEM_PROMPT } from './support/conversation.ts';
import { useClusterRig } from './support/cluster-rig.ts';

/*
 * What `baton cluster status` reads, on a real 3-node cluster with daemons in their own processes: each live daemon
 * listed once with an age taken when its heartbeat was read, in-step replicas with a lag; a daemon restarted on its
 * data directory replaces its predecessor's entry, and one dead for longer than `forgetDeadMs` is dropped by the
 * others (both waited for as the daemons' own events).
 */

const LEASE_MS = 1_500;
const FORGET_MS = 3_000;

describe('cluster status membership: one entry per live daemon', { timeout: 120_000 }, () => {
  const rig = useClusterRig({ leaseMs: LEASE_MS, forgetDeadMs: FORGET_MS, daemons: 2 });

  it('lists live daemons once with per-read ages; a restart replaces its entry; a dead daemon ages out', async () => {
    const [a, b] = rig.daemons;
    const transport = rig.transport;
    await new BatonClient(transport, { timeoutMs: 30_000 }).open({ project_id: 'listing', model: MODEL, system: SYSTEM_PROMPT });
    const reads: number[] = [];
    const clock = (): number => {
      const t = Date.now();
      reads.push(t);
      return t;
    };
    const first = await readClusterStatus(transport.connection, clusterNames(), clock);
    expect(first.daemons.map((d) => d.daemonId).sort()).toEqual([a?.daemonId, b?.daemonId].sort());
    // Each age is the reader's clock when that heartbeat arrived, less the time the daemon stamped in it.
    for (const d of first.daemons) expect(reads).toContain(d.heartbeatAt + d.ageMs);
    expect(first.log).toMatchObject({ name: 'BATON_LOG', electing: false });
    const followers = [...(first.log?.replicas ?? []), ...first.bucket.replicas].filter((r) => !r.leader);
    expect(followers.length).toBeGreaterThan(0);
    for (const r of followers) expect(typeof r.lag).toBe('number');

    // SIGKILL a; a new daemon on a's data directory deletes a's heartbeat as its first act in the cluster.
    await a?.kill();
    const a2 = await rig.spawn({ ...rig.config(0), dataDir: a?.dataDir as string });
    await a2.event((ev) => ev.ev === 'replaced' && ev['previous'] === a?.daemonId);
    const restarted = await readClusterStatus(transport.connection, clusterNames(), Date.now);
    expect(restarted.daemons.map((d) => d.daemonId).sort()).toEqual([a2.daemonId, b?.daemonId].sort());

    // SIGKILL b: once silent for FORGET_MS on a2's clock, a2 deletes its heartbeat.
    await b?.kill();
    await a2.event((ev) => ev.ev === 'forgot' && ev['daemonId'] === b?.daemonId);
    const aged = await readClusterStatus(transport.connection, clusterNames(), Date.now);
    expect(aged.daemons.map((d) => d.daemonId)).toEqual([a2.daemonId]);
  });
});
