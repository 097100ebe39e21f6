import { join } from 'node:path';
import { BatonClient } from '@baton/client';
import { LmdbEventLog, verifySession, type LogHistory } from '@baton/runtime';
import { describe, expect, it } from 'vitest';
import { conversation } from './support/conversation.ts';
import { SessionLoad, replicatedHistory, useClusterRig, type DaemonChild } from './support/cluster-rig.ts';

/*
 * A rolling restart as docs/operations.md describes it: three cluster daemons (durability replicated, R3) serve
 * sessions that append without pause through `BatonClient` with failover; each daemon in turn is sent SIGTERM (it
 * hands its sessions off), started again on its own data directory, and the next one follows once the load has gone
 * on. Nothing acknowledged is lost, no message is stored twice, and every session re-folds without a divergence on
 * the disk of the daemon that holds it at the end (what `baton replay --verify` runs).
 */

const SESSIONS = 12;
const LEASE_MS = 2_000;
/** Messages per append. */
const BATCH = 2;

/** How many times each message id appears in a session's replicated log. */
function idCounts(history: LogHistory, sessionId: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const b of history.batches) {
    for (const s of b.streams) {
      if (s.s !== `session/${sessionId}`) continue;
      for (const r of s.r) {
        if (r.type !== 'messages.appended') continue;
        for (const m of (r.payload as { messages: { id: string }[] }).messages) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
      }
    }
  }
  return counts;
}

describe('rolling restart of three cluster daemons under load', () => {
  const rig = useClusterRig({ leaseMs: LEASE_MS });

  it('each daemon SIGTERMed and started again in turn: nothing acknowledged lost, nothing twice, every session verifies', { timeout: 240_000 }, async () => {
    const { daemons, transport } = rig;
    const client = new BatonClient(transport, { timeoutMs: 10_000, failover: { timeoutMs: 60_000, attemptTimeoutMs: 3_000, openAttemptTimeoutMs: 1_000, delayMs: 50, maxDelayMs: 250 } });
    const load = new SessionLoad(client, 'roll');
    await load.open(SESSIONS);

    // Acknowledgements as they come: a waiter per target count, and the longest silence any session saw.
    let acks = 0;
    const waiters: { at: number; resolve: () => void }[] = [];
    const lastAck = new Map<string, number>();
    let longestGap = { ms: 0, sessionId: '' };
    const onAck = (sid: string, at: number): void => {
      acks++;
      const gap = at - (lastAck.get(sid) ?? at);
      if (gap > longestGap.ms) longestGap = { ms: gap, sessionId: sid };
      lastAck.set(sid, at);
      for (const w of waiters.filter((x) => acks >= x.at)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    };
    const acked = (more: number): Promise<void> => new Promise((resolve) => waiters.push({ at: acks + more, resolve }));

    // Every session appends without pause until told to stop.
    let stopping = false;
    const running = load.sessions.map(async (sid, i) => {
      const messages = conversation(400, { prefix: `roll${i}-` });
      for (let k = 0; !stopping && k < messages.length; k += BATCH) await load.append(sid, messages.slice(k, k + BATCH), onAck);
    });

    await acked(3 * SESSIONS);
    const restarts: string[] = [];
    for (let i = 0; i < daemons.length; i++) {
      const old = daemons[i] as DaemonChild;
      const held = old.held().size;
      const stopped = performance.now();
      await old.stop();
      const fresh = await rig.spawn({ ...rig.config(i), dataDir: old.dataDir });
      daemons[i] = fresh;
      restarts.push(`${old.daemonId} (held ${held}) → ${fresh.daemonId} in ${Math.round(performance.now() - stopped)} ms`);
      // The load goes on before the next daemon is restarted.
      await acked(3 * SESSIONS);
    }
    stopping = true;
    await Promise.all(running);
    expect(load.failures).toEqual([]);

    // Every acknowledged id is in its session's replicated log, and no message is there twice.
    let compared = 0;
    for (const sid of load.sessions) {
      const counts = idCounts(await replicatedHistory(transport.connection, sid, 3), sid);
      const acknowledged = load.acked.get(sid) ?? new Set<string>();
      expect([...acknowledged].filter((id) => !counts.has(id))).toEqual([]);
      expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
      compared += acknowledged.size;
    }
    expect(compared).toBe(load.ackedCount());

    // Each session is held by one daemon now; on its disk the session re-folds without a divergence.
    const holders = new Map<string, DaemonChild>();
    for (const d of daemons) for (const sid of d.held()) holders.set(sid, d);
    for (const d of daemons) await d.stop();
    let verified = 0;
    for (const d of daemons) {
      const log = LmdbEventLog.open({ path: join(d.dataDir, 'events'), readOnly: true });
      try {
        for (const sid of load.sessions) {
          if (holders.get(sid) !== d) continue;
          expect(verifySession(log, sid).divergence).toBeNull();
          verified++;
        }
      } finally {
        await log.close();
      }
    }
    // Every session appended until the end, so each has a holder among the daemons running now.
    expect(verified).toBe(SESSIONS);
    console.log(
      `rolling restart under load (lease ${LEASE_MS} ms, ${SESSIONS} sessions appending back to back): ${restarts.join('; ')}; ` +
        `${compared} acknowledged ids all in the replicated logs once; longest silence of a session ${Math.round(longestGap.ms)} ms`,
    );
  });
});
