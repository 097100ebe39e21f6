import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsServer, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNames } from '../../src/cluster/cluster-names.ts';
import { ClusterStore } from '../../src/cluster/cluster-store.ts';
import { DaemonHeartbeat } from '../../src/cluster/daemon-heartbeat.ts';
import { LeaseJudge } from '../../src/cluster/lease-judge.ts';

const names = clusterNames('hb');
const TTL = 1_000;

/** Polls `check` until it holds; fails after `ms` (a bound on waiting, not an assertion about speed). */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('DaemonHeartbeat: blind heartbeats, watched and judged on the watcher’s own clock', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let store: ClusterStore;

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    store = await ClusterStore.open(nc, names, { replicas: 1 });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  function heartbeat(daemonId: string, judge: LeaseJudge, monotonic: () => number): DaemonHeartbeat {
    return new DaemonHeartbeat({ kv: store.kv, names, daemonId, judge, intervalMs: 30, monotonic, info: () => ({ sessions: 0 }), wallClock: () => 0 });
  }

  it('sees a live daemon beat, judges it stale a TTL after its last beat, and at once when it leaves', async () => {
    let now = 0;
    const watcherJudge = new LeaseJudge(TTL);
    const watcher = heartbeat('watcher', watcherJudge, () => now);
    const a = heartbeat('a', new LeaseJudge(TTL), () => 0);
    const b = heartbeat('b', new LeaseJudge(TTL), () => 0);
    await watcher.start();
    await a.start();
    await b.start();
    await until(() => watcherJudge.revisionOf('a') > 0 && watcherJudge.revisionOf('b') > 0);
    const first = watcherJudge.revisionOf('a');
    await until(() => watcherJudge.revisionOf('a') > first);

    // `a` stops beating (a crash): stale once its last revision is a TTL old on the watcher's clock, not sooner.
    await a.stop(false);
    await watcher.refresh('a');
    now += TTL - 1;
    expect(watcherJudge.isStale('a', now)).toBe(false);
    now += 1;
    expect(watcherJudge.isStale('a', now)).toBe(true);

    // `b` kept beating: each new revision restarts its countdown. Then it leaves (a drain): its heartbeat is deleted
    // and it is gone without waiting for the TTL.
    const seen = watcherJudge.revisionOf('b');
    await until(() => watcherJudge.revisionOf('b') > seen);
    expect(watcherJudge.isStale('b', now + TTL - 1)).toBe(false);
    await b.stop(true);
    await until(() => watcherJudge.isStale('b', now));
    expect(watcherJudge.view(now).find((d) => d.daemonId === 'b')).toMatchObject({ gone: true });

    expect(watcher.sinceLastBeat(now)).not.toBeNull();
    await watcher.stop(true);
  });
});
