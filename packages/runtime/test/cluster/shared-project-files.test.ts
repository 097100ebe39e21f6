import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { HistoryStore, fileVersions } from '@baton/memory-store';
import { startNatsCluster, type NatsClusterHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { clusterNames } from '../../src/cluster/cluster-names.ts';
import { ClusterStore } from '../../src/cluster/cluster-store.ts';
import { followSharedFiles } from '../../src/cluster/follow-shared-files.ts';
import { SharedFileVersions } from '../../src/cluster/shared-file-versions.ts';
import { SharedProjectFiles, sharedRel } from '../../src/cluster/shared-project-files.ts';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { EventLogCommitJournal } from '../../src/memory/event-log-commit-journal.ts';

/** One daemon's side: its own connection (to its own node), data directory, event log and shared files. */
interface Side {
  readonly id: string;
  readonly nc: NatsConnection;
  readonly store: ClusterStore;
  readonly dir: string;
  readonly log: LmdbEventLog;
  readonly journal: EventLogCommitJournal;
  readonly files: SharedProjectFiles;
  readonly replaced: unknown[];
}

const names = clusterNames('shared');
const MEMORY = sharedRel('shop', 'MEMORY');

async function side(id: string, url: string): Promise<Side> {
  const nc = await connect({ servers: url, name: id });
  const store = await ClusterStore.open(nc, names, { replicas: 3 });
  const dir = await mkdtemp(join(tmpdir(), `baton-shared-${id}-`));
  const log = LmdbEventLog.open({ path: join(dir, 'events') });
  const journal = new EventLogCommitJournal(log);
  const replaced: unknown[] = [];
  const files = new SharedProjectFiles({
    versions: new SharedFileVersions(store.kv, names, { maxValueBytes: store.maxEntryBytes }),
    daemonId: id,
    memoryRoot: join(dir, 'memory'),
    history: new HistoryStore(join(dir, 'history')),
    journal,
    onReplaced: (info) => replaced.push(info),
  });
  return { id, nc, store, dir, log, journal, files, replaced };
}

const live = (s: Side, rel = MEMORY): Promise<string | null> => readFile(join(s.dir, 'memory', rel), 'utf8').catch(() => null);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Appends `line` to the project's MEMORY.md the way a writer does: sync, read the live copy, commit on that base. */
async function appendLine(s: Side, line: string): Promise<'committed' | 'conflict'> {
  const versions = await s.files.sync('shop');
  const base = versions[MEMORY] ?? 0;
  const current = (await live(s)) ?? '# Project memory\n';
  const result = await s.files.commit({ projectId: 'shop', writerId: `${s.id}-w1`, at: Date.now(), files: [{ rel: MEMORY, base, data: bytes(`${current}${line}\n`) }] });
  return result.conflicts.length > 0 ? 'conflict' : 'committed';
}

describe('project memory files shared by daemons on a 3-node JetStream cluster (R3)', () => {
  let cluster: NatsClusterHandle;
  let a: Side;
  let b: Side;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    const [u1, u2] = cluster.urls as [string, string, string];
    a = await side('daemon-a', u1);
    b = await side('daemon-b', u2);
    }, 120_000);

  afterAll(async () => {
    for (const s of [a, b]) {
      if (s === undefined) continue;
      await s.nc.close();
      await s.log.close();
      await rm(s.dir, { recursive: true, force: true });
    }
    await cluster?.stop();
  });

  it('a commit on a stale base is a conflict: the other daemon’s version stays and the loser catches up with it', async () => {
    const first = await a.files.commit({ projectId: 'shop', writerId: 'a-w1', at: 1, files: [{ rel: MEMORY, base: 0, data: bytes('v1 from a\n') }] });
    expect(first.conflicts).toEqual([]);
    expect(first.files.map((f) => f.rel)).toEqual([MEMORY]);
    expect(await live(a)).toBe('v1 from a\n');

    expect(await b.files.sync('shop')).toEqual({ [MEMORY]: 1 });
    expect(await live(b)).toBe('v1 from a\n');
    const second = await b.files.commit({ projectId: 'shop', writerId: 'b-w1', at: 2, files: [{ rel: MEMORY, base: 1, data: bytes('v2 from b\n') }] });
    expect(second.conflicts).toEqual([]);

    // A's writer staged version 1 and edited it: B's version 2 is not overwritten.
    const stale = await a.files.commit({ projectId: 'shop', writerId: 'a-w2', at: 3, files: [{ rel: MEMORY, base: 1, data: bytes('v2 from a\n') }] });
    expect(stale).toEqual({ files: [], conflicts: [MEMORY] });
    expect(await live(a)).toBe('v2 from b\n');
    // Every version A's copy held is in its own journal (history and restore work on it as on any commit).
    const versions = await fileVersions(a.journal, MEMORY);
    expect(versions.map((v) => [v.commitId, v.writerId])).toEqual([
      ['a-w1-project', 'a-w1'],
      ['shared-shop-MEMORY-v2', 'b-w1'],
    ]);
  });

  it('two daemons committing on the same base at once: exactly one wins in every round, and both copies end equal', async () => {
    let aWins = 0;
    let bWins = 0;
    for (let round = 0; round < 40; round++) {
      const base = (await a.files.sync('race'))[sharedRel('race', 'MEMORY')] ?? 0;
      await b.files.sync('race');
      const rel = sharedRel('race', 'MEMORY');
      const [ra, rb] = await Promise.all([
        a.files.commit({ projectId: 'race', writerId: `a-r${round}`, at: round, files: [{ rel, base, data: bytes(`round ${round} by a\n`) }] }),
        b.files.commit({ projectId: 'race', writerId: `b-r${round}`, at: round, files: [{ rel, base, data: bytes(`round ${round} by b\n`) }] }),
      ]);
      const won = [ra.conflicts.length === 0, rb.conflicts.length === 0];
      expect(won.filter(Boolean)).toHaveLength(1);
      if (won[0]) aWins++;
      else bWins++;
      const winner = won[0] ? 'a' : 'b';
      expect(await live(a, rel)).toBe(`round ${round} by ${winner}\n`);
      expect(await live(b, rel)).toBe(`round ${round} by ${winner}\n`);
    }
    expect(aWins + bWins).toBe(40);
  }, 120_000);

  it('writers on two daemons appending to MEMORY.md concurrently lose no update: every committed line is in the newest version, once', async () => {
    const committed: string[] = [];
    let conflicts = 0;
    const worker = async (s: Side): Promise<void> => {
      for (let i = 0; i < 15; i++) {
        const line = `- ${s.id} entry ${i}`;
        // A writer whose commit conflicted runs again on the newer version, as the next writer of its session would.
        for (;;) {
          const outcome = await appendLine(s, line);
          if (outcome === 'committed') break;
          conflicts++;
        }
        committed.push(line);
      }
    };
    await Promise.all([worker(a), worker(b)]);
    await a.files.sync('shop');
    await b.files.sync('shop');
    const final = (await live(a)) ?? '';
    expect(await live(b)).toBe(final);
    for (const line of committed) expect(final.split('\n').filter((l) => l === line)).toHaveLength(1);
    expect(committed).toHaveLength(30);
    // The two workers really raced (on this machine some rounds always overlap); a run without any would prove little.
    expect(conflicts).toBeGreaterThan(0);
  }, 120_000);

  it('a follower brings a daemon’s copy up to date as soon as another daemon commits', async () => {
    const follower = await followSharedFiles(a.store.kv, names, a.files, (err) => {
      throw err;
    });
    try {
      const rel = sharedRel('followed', 'MEMORY-api');
      await b.files.commit({ projectId: 'followed', writerId: 'b-f1', at: 5, files: [{ rel, base: 0, data: bytes('spillover from b\n') }] });
      const deadline = Date.now() + 10_000;
      while ((await live(a, rel)) !== 'spillover from b\n' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await live(a, rel)).toBe('spillover from b\n');
      expect(await a.files.sync('followed')).toEqual({ [rel]: 1 });
    } finally {
      follower.stop();
    }
  });

  it('a version whose value does not check is refused as bad_entry and the live copy is left alone', async () => {
    const rel = sharedRel('damaged', 'MEMORY');
    await a.files.commit({ projectId: 'damaged', writerId: 'a-d1', at: 6, files: [{ rel, base: 0, data: bytes('good\n') }] });
    await a.store.kv.create(names.memoryVersionKey('damaged', 'MEMORY', 2), bytes('not msgpack of a version'));
    const err = await b.files.sync('damaged').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterError);
    expect((err as ClusterError).code).toBe('bad_entry');
    expect(await live(b, rel)).toBeNull();
    expect(await live(a, rel)).toBe('good\n');
  });

  it('refuses paths outside the project and ids that are not key tokens, changing nothing', async () => {
    const outside = await a.files.commit({ projectId: 'shop', writerId: 'a-x', at: 7, files: [{ rel: 'sessions/s1/checkpoint.md', base: 0, data: bytes('x') }] }).catch((e: unknown) => e);
    expect((outside as ClusterError).code).toBe('config');
    const badId = await a.files.sync('shop.other').catch((e: unknown) => e);
    expect((badId as ClusterError).code).toBe('config');
  });
});
