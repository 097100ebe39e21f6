import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsCluster, type NatsClusterHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { clusterNames } from '../../src/cluster/cluster-names.ts';
import { ClusterStore } from '../../src/cluster/cluster-store.ts';
import { foldLogEntries } from '../../src/cluster/log-history.ts';
import { claimSession, type ClaimOutcome } from '../../src/cluster/session-claim.ts';
import { SessionLogWriter } from '../../src/cluster/session-log-writer.ts';
import { SessionEpochs } from '../../src/cluster/session-epochs.ts';
import { SessionLog } from '../../src/cluster/session-log.ts';

/** A contender: its own connection (to its own node), store handles, and daemon id. */
interface Contender {
  readonly id: string;
  readonly nc: NatsConnection;
  readonly store: ClusterStore;
  readonly epochs: SessionEpochs;
}

const ROUNDS = 60;
const names = clusterNames('race');

async function contender(id: string, url: string): Promise<Contender> {
  const nc = await connect({ servers: url, name: id });
  const store = await ClusterStore.open(nc, names, { replicas: 3 });
  return { id, nc, store, epochs: new SessionEpochs(store.kv, names) };
}

function claim(c: Contender, sid: string, takeOver: boolean): Promise<ClaimOutcome> {
  return claimSession(c.epochs, new SessionLog(c.store, sid), c.id, { isStale: () => takeOver, at: 0 });
}

/**
 * Writes batches as fast as acknowledgements come until a write is fenced. After `lapse` writes the writer stops, as a
 * daemon does once its own heartbeat is older than most of its lease, waits for `resume`, and writes once more.
 */
async function writeUntilFenced(c: Contender, sid: string, held: Extract<ClaimOutcome, { claimed: true }>, lapse: number, acked: string[], resume: Promise<unknown> = Promise.resolve()): Promise<ClusterError | null> {
  const writer = new SessionLogWriter(c.store, new SessionLog(c.store, sid), held);
  for (let i = 0; ; i++) {
    if (i === lapse) await resume;
    const tag = `${c.id}:${held.epoch}:${i}`;
    try {
      await writer.write([{ s: `session/${sid}`, b: 0, r: [{ type: 'probe', at: i, payload: tag }] }]);
    } catch (err) {
      if (err instanceof ClusterError && err.code === 'fenced') return err;
      throw err;
    }
    acked.push(tag);
    if (i >= lapse) return null;
  }
}

describe('two daemons racing for one session on a 3-node JetStream cluster (R3)', () => {
  let cluster: NatsClusterHandle;
  let a: Contender;
  let b: Contender;
  let c: Contender;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    const [u1, u2, u3] = cluster.urls as [string, string, string];
    a = await contender('daemon-a', u1);
    b = await contender('daemon-b', u2);
    c = await contender('daemon-c', u3);
    }, 120_000);

  afterAll(async () => {
    for (const x of [a, b, c]) await x?.nc.close();
    await cluster?.stop();
  });

  it(`never lets two owners' records interleave, over ${ROUNDS} rounds of claims and takeovers under load`, async () => {
    let markerRaces = 0;
    let doubleTakeovers = 0;
    let lapsed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const sid = `race-${round}`;
      // Both claim a fresh session at once: exactly one wins epoch 1.
      const first = await Promise.all([claim(a, sid, false), claim(b, sid, false)]);
      expect(first.filter((o) => o.claimed)).toHaveLength(1);
      const ownerIndex = first[0]?.claimed === true ? 0 : 1;
      const owner = ownerIndex === 0 ? a : b;
      const held = first[ownerIndex] as Extract<ClaimOutcome, { claimed: true }>;
      expect(held.epoch).toBe(1);

      // The owner writes as fast as it can while others take the session over (they judged it stale).
      const ownerAcked: string[] = [];
      let takeoverDone: () => void = () => {};
      const takenOver = new Promise<void>((resolve) => (takeoverDone = resolve));
      const ownerRun = writeUntilFenced(owner, sid, held, 300, ownerAcked, takenOver);
      await new Promise((r) => setTimeout(r, round % 5));
      const rivals = round % 2 === 0 ? [ownerIndex === 0 ? b : a] : [ownerIndex === 0 ? b : a, c];
      const takeovers = await Promise.all(rivals.map((r) => claim(r, sid, true)));
      takeoverDone();
      // Rivals claiming at once get distinct epochs (or lose the create); the newest epoch holds the session.
      const claimed = takeovers.flatMap((o, i) => (o.claimed ? [{ rival: rivals[i] as Contender, held: o }] : []));
      expect(claimed.length).toBeGreaterThanOrEqual(1);
      const epochs = claimed.map((x) => x.held.epoch);
      expect(new Set(epochs).size).toBe(epochs.length);
      const newest = Math.max(...epochs);
      if (rivals.length > 1) doubleTakeovers++;
      const runs = claimed.map((x) => {
        const acked: string[] = [];
        return { ...x, acked, done: writeUntilFenced(x.rival, sid, x.held, x.held.epoch === newest ? 5 : 300, acked) };
      });
      const fenced = await ownerRun;
      const results = await Promise.all(runs.map((r) => r.done));

      // The old owner found out at its next write, as did any rival a newer rival overtook; the newest never was.
      expect(fenced?.code).toBe('fenced');
      expect((fenced?.details?.['epoch'] as number) >= 2).toBe(true);
      markerRaces += claimed.reduce((n, x) => n + x.held.overtaken, 0);
      if (ownerAcked.length > 300) lapsed++;
      runs.forEach((r, i) => expect(results[i]?.code ?? null).toBe(r.held.epoch === newest ? null : 'fenced'));

      // Read back through a third node: one owner at a time, every acknowledged write kept, each writer in order.
      const history = foldLogEntries(await new SessionLog(c.store, sid).read());
      expect(history.markers[0]).toMatchObject({ epoch: 1, daemon: owner.id });
      expect(history.epoch).toBe(newest);
      const order = history.batches.map((x) => String(x.streams[0]?.r[0]?.payload));
      const acked = [ownerAcked, ...runs.map((r) => r.acked)];
      expect(new Set(order)).toEqual(new Set(acked.flat()));
      for (const list of acked) expect(order.filter((t) => list.includes(t))).toEqual(list);
      for (const x of history.batches) {
        const m = [...history.markers].reverse().find((mk) => mk.index < x.index);
        expect(m?.epoch).toBe(x.epoch);
      }
    }
    console.log(`ownership race: ${ROUNDS} rounds, ${doubleTakeovers} with two rivals taking over at once, ${markerRaces} indexes the writing owner took from a marker aimed at them, ${lapsed} where the owner had to stop writing (lease lapsed) before the marker landed`);
  }, 240_000);
});
