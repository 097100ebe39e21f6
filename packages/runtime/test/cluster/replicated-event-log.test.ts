import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { startNatsServer, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { clusterNames } from '../../src/cluster/cluster-names.ts';
import { ClusterStore } from '../../src/cluster/cluster-store.ts';
import { hydrateSession } from '../../src/cluster/hydrate-session.ts';
import { foldLogEntries } from '../../src/cluster/log-history.ts';
import { ReplicatedEventLog } from '../../src/cluster/replicated-event-log.ts';
import { realSleep, type RetryPolicy } from '../../src/cluster/retry.ts';
import { claimSession } from '../../src/cluster/session-claim.ts';
import { SessionEpochs } from '../../src/cluster/session-epochs.ts';
import { SessionLog } from '../../src/cluster/session-log.ts';
import { SessionLogWriter } from '../../src/cluster/session-log-writer.ts';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';

const names = clusterNames('rel');
/** Gives up quickly, so an outage is seen as `unavailable` within the test. */
const SHORT: RetryPolicy = { deadlineMs: 1_500, delayMs: 100, maxDelayMs: 300, now: () => performance.now(), sleep: realSleep };

const rec = (i: number): { type: string; at: number; payload: unknown; keys: string[] } => ({ type: 'messages.appended', at: i, payload: { i }, keys: [`m:${i}`] });

describe('ReplicatedEventLog: appends acknowledged once LMDB and the JetStream log hold them', () => {
  let server: NatsServerHandle;
  let nc: NatsConnection;
  let store: ClusterStore;
  let dir: string;
  let local: LmdbEventLog;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connect({ servers: server.url });
    store = await ClusterStore.open(nc, names, { replicas: 1, timeoutMs: 500 });
    dir = await mkdtemp(join(tmpdir(), 'baton-replicated-log-'));
    local = LmdbEventLog.open({ path: join(dir, 'a') });
  });

  afterAll(async () => {
    await local?.close();
    await nc?.close();
    process.kill(server.pid, 'SIGCONT');
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps an append JetStream did not take, writes it first at the same index once it can, and fences a taken-over session', async () => {
    const epochs = new SessionEpochs(store.kv, names);
    const log = new SessionLog(store, 's1', SHORT);
    const claim = await claimSession(epochs, log, 'daemon-a', { isStale: () => false, at: 0 });
    if (!claim.claimed) throw new Error('not claimed');
    const writer = new SessionLogWriter(store, log, claim);
    const fenced: string[] = [];
    const replicated = new ReplicatedEventLog({ local, writerOf: (sid) => (sid === 's1' ? writer : undefined), onFenced: (sid) => fenced.push(sid) });

    await replicated.append('session/s1', [rec(1), rec(2)]);
    // Another session's stream and a stream of no session go to the local log only.
    await replicated.append('session/other', [rec(9)]);
    expect(writer.nextIndex).toBe(claim.nextIndex + 1);

    // JetStream stops answering: the record is in LMDB, the append is not acknowledged, the entry stays queued.
    process.kill(server.pid, 'SIGSTOP');
    await expect(replicated.append('session/s1', [rec(3)])).rejects.toMatchObject({ code: 'unavailable' });
    expect(local.lastSeq('session/s1')).toBe(3);
    expect(writer.pendingEntries).toBe(1);
    process.kill(server.pid, 'SIGCONT');
    // Before the session's next request: the queued entry goes first, then the next append follows it.
    await replicated.catchUp('s1');
    expect(writer.pendingEntries).toBe(0);
    await replicated.append('session/s1', [rec(4)]);
    // A duplicate (by message id) stores nothing and sends nothing.
    await replicated.append('session/s1', [{ type: 'session.opened', at: 0, payload: {}, msgId: 'once' }]);
    await replicated.append('session/s1', [{ type: 'session.opened', at: 0, payload: {}, msgId: 'once' }]);

    // The log has no hole and rebuilds the local stream exactly, lookup keys included.
    const history = foldLogEntries(await log.read(1));
    expect(history.batches.map((b) => b.streams.map((s) => [s.s, s.b, s.r.length]))).toEqual([[['session/s1', 0, 2]], [['session/s1', 2, 1]], [['session/s1', 3, 1]], [['session/s1', 4, 1]]]);
    const copy = LmdbEventLog.open({ path: join(dir, 'b') });
    try {
      await hydrateSession(copy, 's1', history);
      expect([...copy.read('session/s1')].map((r) => r.at)).toEqual([...local.read('session/s1')].map((r) => r.at));
      expect(copy.keySeq('session/s1', 'm:3')).toBe(3);
    } finally {
      await copy.close();
    }

    // Another daemon takes the session over: the next write is fenced, the session reported, and it stays fenced.
    const rival = await claimSession(epochs, new SessionLog(store, 's1'), 'daemon-b', { isStale: () => true, at: 0 });
    expect(rival.claimed).toBe(true);
    const err: unknown = await replicated.append('session/s1', [rec(5)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterError);
    expect(err).toMatchObject({ code: 'fenced' });
    expect(fenced).toEqual(['s1']);
    await expect(replicated.catchUp('s1')).rejects.toMatchObject({ code: 'fenced' });
    const after = foldLogEntries(await log.read(1));
    expect(after.owner).toBe('daemon-b');
    expect(after.batches.every((b) => b.daemon === 'daemon-a')).toBe(true);
  });
});
