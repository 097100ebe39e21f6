import { BatonClient } from '@baton/client';
import { describe, expect, it } from 'vitest';
import { SessionLoad, historyIds, replicatedHistory, useClusterRig, writersSettled, type DaemonChild } from './support/cluster-rig.ts';

const SESSIONS = 30;
const LEASE_MS = 2_000;
const PAUSE_MS = LEASE_MS * 4;

describe('three daemons (separate processes, durability replicated, R3): one is SIGSTOPped longer than its lease, then SIGCONTed', () => {
  const rig = useClusterRig({ leaseMs: LEASE_MS });

  it('the paused daemon writes nothing more for the sessions it lost; no session has two owners’ records interleaved; nothing acknowledged is lost', async () => {
    // Requests time out well within the pause, so the paused daemon's sessions are reopened (and taken over) meanwhile.
    const client = new BatonClient(rig.transport, { timeoutMs: 2_000, failover: { timeoutMs: 45_000 } });
    const load = new SessionLoad(client, 'p');
    await load.open(SESSIONS);
    await load.turns(0, 5);
    expect(await writersSettled(client, load.sessions, 60_000)).toBe(SESSIONS);

    const victim = [...rig.daemons].sort((x, y) => y.held().size - x.held().size)[0] as DaemonChild;
    const held = victim.held();
    let acks = 0;
    let paused: Promise<void> = Promise.resolve();
    // Under load: the holder freezes for four leases (its sessions' clients fail over meanwhile), then thaws.
    await load.turns(5, 9, () => {
      if (++acks !== SESSIONS) return;
      victim.signal('SIGSTOP');
      paused = new Promise((resolve) =>
        setTimeout(() => {
          victim.signal('SIGCONT');
          resolve();
        }, PAUSE_MS),
      );
    });
    await paused;
    // More load after it woke: requests and timers of the sessions it lost reach it no more, or are fenced.
    await load.turns(9, 11);
    expect(load.failures).toEqual([]);

    let lost = 0;
    const takenOver = new Set<string>();
    let takeovers = 0;
    for (const sid of load.sessions) {
      // Folding the replicated log throws when an older epoch wrote after a newer one's marker.
      const history = await replicatedHistory(rig.transport.connection, sid, 3);
      const ids = historyIds(history, sid);
      expect([...(load.acked.get(sid) ?? [])].filter((id) => !ids.has(id))).toEqual([]);
      if (!held.has(sid)) continue;
      const next = history.markers.find((m) => m.daemon !== victim.daemonId && m.index > (history.markers.find((x) => x.daemon === victim.daemonId)?.index ?? 0));
      if (next === undefined) continue;
      lost++;
      takenOver.add(sid);
      takeovers += history.markers.length - 1;
      // Nothing of the paused daemon after the marker of the daemon that took the session from it.
      const late = history.batches.filter((b) => b.daemon === victim.daemonId && b.index > next.index);
      expect(late).toEqual([]);
    }
    console.log(
      `SIGSTOP of ${victim.daemonId} for ${PAUSE_MS} ms (lease ${LEASE_MS} ms) holding ${held.size}/${SESSIONS} sessions: ${lost} taken over ` +
        `(${takeovers} takeover markers), ${victim.events.filter((e) => e.ev === 'dropped').length} dropped by it after it woke, ${load.ackedCount()} acknowledged ids all in the replicated logs`,
    );
    // A session with no request during the pause may stay with the paused daemon; the others moved.
    expect(lost).toBeGreaterThan(held.size / 2);
    // Once awake, it noticed its lease had lapsed and let go of every session it lost.
    const dropped = new Set(victim.events.filter((e) => e.ev === 'dropped').map((e) => e.sessionId));
    expect([...takenOver].filter((sid) => !dropped.has(sid))).toEqual([]);
  });
});
