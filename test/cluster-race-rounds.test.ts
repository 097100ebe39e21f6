import { BatonClient } from '@baton/client';
import { ClusterStore, SessionLog, clusterNames, foldLogEntries } from '@baton/runtime';
import { describe, expect, it } from 'vitest';
import { conversation } from './support/conversation.ts';
import { SessionLoad, useClusterRig, type DaemonChild } from './support/cluster-rig.ts';

const ROUNDS = 50;
const LEASE_MS = 500;
// Paused for three leases: long enough for the other daemon to judge it stale and take its session over.
const PAUSE_MS = LEASE_MS * 3;
const TURNS = 40;

type LogEntry = NonNullable<Awaited<ReturnType<SessionLog['entryAt']>>>;

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
};

describe('two daemons (separate processes, durability replicated, R3) race for one session per round: its holder is SIGSTOPped longer than its lease, then SIGCONTed', () => {
  const rig = useClusterRig({ leaseMs: LEASE_MS, daemons: 2 });

  it(`over ${ROUNDS} rounds: one owner at a time in every session's log, nothing from a paused owner after its successor's marker, every acknowledged id stored once`, async () => {
    const { daemons, transport } = rig;
    // The request timeout is shorter than the pause, so the client reopens the session on the other daemon meanwhile.
    let reopened = 0;
    const client = new BatonClient(transport, { timeoutMs: 500, failover: { timeoutMs: 30_000, onReopened: () => void reopened++ } });
    const load = new SessionLoad(client, 'race');
    const paused = new Map<string, string>();

    for (let round = 0; round < ROUNDS; round++) {
      await load.open(1);
      const sid = load.sessions.at(-1) as string;
      await until(() => daemons.some((d) => d.held().has(sid)));
      const holder = daemons.find((d) => d.held().has(sid)) as DaemonChild;
      paused.set(sid, holder.daemonId);
      const messages = conversation(TURNS, { prefix: `r${round}-` });
      let sent = 0;
      let afterResume = 0;
      let resumed = false;
      let stop = false;
      // Appends go on, one after another, through the pause and after it.
      const appender = (async () => {
        while (!stop && sent < TURNS) {
          await load.append(sid, messages.slice(sent * 4, sent * 4 + 4));
          sent++;
          if (resumed) afterResume++;
        }
      })();
      await until(() => sent >= 2 || stop);
      holder.signal('SIGSTOP');
      await new Promise((r) => setTimeout(r, PAUSE_MS));
      holder.signal('SIGCONT');
      resumed = true;
      // A few appends after the old holder woke: it may still try to write with its old epoch.
      await until(() => afterResume >= 3 || sent >= TURNS);
      stop = true;
      await appender;
    }
    expect(load.failures).toEqual([]);

    // Read back entry by entry from the stream's leader and check the ownership rules here, independently of the fold.
    const store = await ClusterStore.open(transport.connection, clusterNames('baton'), { replicas: 3 });
    let takeovers = 0;
    let takenFromPaused = 0;
    let acked = 0;
    for (const sid of load.sessions) {
      const log = new SessionLog(store, sid);
      const last = await log.lastIndex();
      const entries: { index: number; entry: LogEntry }[] = [];
      for (let i = 1; i <= last; i++) {
        const entry = await log.entryAt(i);
        expect(entry, `${sid}: entry ${i}`).not.toBeNull();
        entries.push({ index: i, entry: entry as LogEntry });
      }
      let epoch = 0;
      let owner: string | null = null;
      const foreign: string[] = [];
      const owners: string[] = [];
      for (const { index, entry } of entries) {
        if (entry.k === 'marker') {
          expect(entry.e, `${sid}: marker epoch at ${index}`).toBeGreaterThan(epoch);
          epoch = entry.e;
          owner = entry.d;
          owners.push(entry.d);
          continue;
        }
        if (entry.e !== epoch || entry.d !== owner) foreign.push(`${index}: ${entry.k} of epoch ${entry.e} by ${entry.d} in epoch ${epoch} of ${String(owner)}`);
      }
      expect(foreign, sid).toEqual([]);
      takeovers += owners.length - 1;
      const first = owners.indexOf(paused.get(sid) as string);
      if (first >= 0 && owners.slice(first + 1).some((d) => d !== paused.get(sid))) takenFromPaused++;

      // Every acknowledged id is stored exactly once.
      const counts = new Map<string, number>();
      for (const b of foldLogEntries(entries).batches) {
        for (const s of b.streams) {
          if (s.s !== `session/${sid}`) continue;
          for (const r of s.r) if (r.type === 'messages.appended') for (const m of (r.payload as { messages: { id: string }[] }).messages) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
        }
      }
      expect([...counts].filter(([, n]) => n !== 1), sid).toEqual([]);
      const ids = [...(load.acked.get(sid) ?? [])];
      expect(ids.filter((id) => counts.get(id) !== 1), sid).toEqual([]);
      acked += ids.length;
    }

    const drops = daemons.flatMap((d) => d.events.filter((e) => e.ev === 'dropped'));
    const fencedWrites = drops.filter((e) => !String(e['reason']).includes('out of touch')).length;
    console.log(
      `race rounds: ${ROUNDS} rounds (lease ${LEASE_MS} ms, pause ${PAUSE_MS} ms), ${takeovers} takeover markers, ${takenFromPaused} sessions taken from their paused holder, ` +
        `${reopened} client reopenings, ${drops.length} sessions dropped by a woken holder (${fencedWrites} on a fenced write, ${drops.length - fencedWrites} on the re-check), ${acked} acknowledged ids each stored once`,
    );
    // The pause outlasts the lease under continuous requests: the session changes hands in most rounds.
    expect(takenFromPaused).toBeGreaterThan(ROUNDS / 2);
  }, 170_000);
});
