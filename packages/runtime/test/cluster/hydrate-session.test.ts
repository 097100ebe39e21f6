import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppendInput } from '@baton/log-schema';
import { HistoryStore, contentHash } from '@baton/memory-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { hydrateSession } from '../../src/cluster/hydrate-session.ts';
import type { LogEntry, StreamRecords } from '../../src/cluster/log-entry.ts';
import { foldLogEntries, type LogHistory } from '../../src/cluster/log-history.ts';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';

const rec = (type: string, at: number, keys?: string[]): AppendInput => ({ type, at, payload: { at }, ...(keys !== undefined ? { keys } : {}) });

/** A history of one epoch whose batches are `parts`, in order. */
function history(parts: StreamRecords[][]): LogHistory {
  const entries: LogEntry[] = [{ k: 'marker', e: 1, d: 'a' }, ...parts.map((a): LogEntry => ({ k: 'batch', e: 1, d: 'a', a }))];
  return foldLogEntries(entries.map((entry, i) => ({ index: i + 1, entry })));
}

const full = history([
  [{ s: 'session/s1', b: 0, r: [rec('session.opened', 1), rec('messages.appended', 2, ['m:1'])] }],
  [{ s: 'writer/s1-w1', b: 0, r: [rec('writer.started', 3)] }],
  [
    { s: 'session/s1', b: 2, r: [rec('messages.appended', 4, ['m:2'])] },
    { s: 'memory/commits', b: 0, r: [{ type: 'commit.applied', at: 5, payload: {}, msgId: 'commit.applied:c1' }] },
  ],
]);

describe('hydrateSession: the local copy of a session brought up to its replicated history', () => {
  let dir: string;
  let log: LmdbEventLog;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-hydrate-'));
    log = LmdbEventLog.open({ path: dir });
  });

  afterEach(async () => {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('fills an empty log with every stream, lookup keys included, and offers commits once', async () => {
    expect(await hydrateSession(log, 's1', full)).toEqual({ appended: 4, replaced: false, streams: 2, commits: 1, files: 0, unreplicated: false });
    expect([...log.read('session/s1')].map((r) => r.at)).toEqual([1, 2, 4]);
    expect(log.keySeq('session/s1', 'm:2')).toBe(3);
    expect(log.lastSeq('writer/s1-w1')).toBe(1);
    expect(log.lastSeq('memory/commits')).toBe(1);
    // Again: nothing is missing, nothing is appended twice (the commit is a duplicate by message id).
    expect(await hydrateSession(log, 's1', full)).toMatchObject({ appended: 0, replaced: false });
    expect(log.lastSeq('memory/commits')).toBe(1);
  });

  it('keeps a local copy that is a prefix and appends the rest', async () => {
    await log.append('session/s1', [rec('session.opened', 1)]);
    expect(await hydrateSession(log, 's1', full)).toMatchObject({ appended: 3, replaced: false });
    expect([...log.read('session/s1')].map((r) => r.at)).toEqual([1, 2, 4]);
  });

  it('replaces a local copy with records the replicated log does not hold, lookup keys and all', async () => {
    await log.append('session/s1', [rec('session.opened', 1), rec('messages.appended', 2, ['m:1']), rec('messages.appended', 9, ['m:unacknowledged'])]);
    await log.append('writer/s1-w7', [rec('writer.started', 9)]);
    expect(await hydrateSession(log, 's1', full)).toMatchObject({ appended: 4, replaced: true });
    expect([...log.read('session/s1')].map((r) => r.at)).toEqual([1, 2, 4]);
    expect(log.keySeq('session/s1', 'm:unacknowledged')).toBeUndefined();
    expect(log.keySeq('session/s1', 'm:2')).toBe(3);
    expect(log.lastSeq('writer/s1-w7')).toBe(0);
    expect([...log.readGlobal()].filter((r) => r.stream === 'session/s1').map((r) => r.at)).toEqual([1, 2, 4]);
  });

  it('stores the memory-file contents a history carries and writes the newest version of the session’s own files; never a shared project file', async () => {
    const v1 = 'checkpoint v1';
    const v2 = 'checkpoint v2';
    const mem = 'project memory from elsewhere';
    const blob = (data: string): AppendInput => ({ type: 'blob', at: 1, payload: { hash: contentHash(data), data: new TextEncoder().encode(data) } });
    const applied = (id: string, files: { rel: string; hash: string }[]): AppendInput => ({ type: 'commit.applied', at: 2, payload: { commitId: id, writerId: 's1-w1', reason: 'writer', at: 2, files }, msgId: `commit.applied:${id}` });
    const withFiles = history([
      [{ s: 'session/s1', b: 0, r: [rec('session.opened', 1)] }],
      [
        { s: 'memory/blobs', b: 0, r: [blob(v1), blob(mem)] },
        { s: 'memory/commits', b: 0, r: [applied('c1', [{ rel: 'sessions/s1/checkpoint.md', hash: contentHash(v1) }, { rel: 'projects/p/MEMORY.md', hash: contentHash(mem) }])] },
      ],
      [
        { s: 'memory/blobs', b: 0, r: [blob(v2)] },
        { s: 'memory/commits', b: 0, r: [applied('c2', [{ rel: 'sessions/s1/checkpoint.md', hash: contentHash(v2) }])] },
      ],
    ]);
    const memoryRoot = join(dir, 'memory');
    const files = { history: new HistoryStore(join(dir, 'history')), memoryRoot };
    // The project's MEMORY.md comes from the cluster's shared versions, never from a session's history: neither where
    // this daemon has no copy yet nor over the copy it has.
    expect(await hydrateSession(log, 's1', withFiles, files)).toMatchObject({ commits: 2, files: 1 });
    expect(await readFile(join(memoryRoot, 'sessions/s1/checkpoint.md'), 'utf8')).toBe(v2);
    expect(await stat(join(memoryRoot, 'projects/p/MEMORY.md')).catch(() => null)).toBeNull();
    await mkdir(join(memoryRoot, 'projects/p'), { recursive: true });
    await writeFile(join(memoryRoot, 'projects/p/MEMORY.md'), 'local memory');
    await log.removeStream?.('session/s1');
    await hydrateSession(log, 's1', withFiles, files);
    expect(await readFile(join(memoryRoot, 'projects/p/MEMORY.md'), 'utf8')).toBe('local memory');
    expect(await files.history.has(contentHash(v1))).toBe(true);
    expect(log.lastSeq('memory/commits')).toBe(2);
    const bad = history([[{ s: 'memory/blobs', b: 0, r: [{ type: 'blob', at: 1, payload: { hash: contentHash('x'), data: new TextEncoder().encode('y') } }] }]]);
    await expect(hydrateSession(log, 's1', bad, files)).rejects.toMatchObject({ code: 'bad_entry' });
  });

  it('keeps a local copy the replicated log never had (written before replication) and says so', async () => {
    await log.append('session/s1', [rec('session.opened', 1), rec('messages.appended', 2, ['m:1'])]);
    const markersOnly = foldLogEntries([{ index: 1, entry: { k: 'marker', e: 1, d: 'a' } }]);
    expect(await hydrateSession(log, 's1', markersOnly)).toMatchObject({ appended: 0, replaced: false, unreplicated: true });
    expect(log.lastSeq('session/s1')).toBe(2);
    expect(log.keySeq('session/s1', 'm:1')).toBe(2);
  });

  it('refuses a history that skips records of a stream, or holds another session’s', async () => {
    const gap = history([[{ s: 'session/s1', b: 1, r: [rec('messages.appended', 2)] }]]);
    await expect(hydrateSession(log, 's1', gap)).rejects.toMatchObject({ code: 'gap' });
    const foreign = history([[{ s: 'session/s2', b: 0, r: [rec('session.opened', 1)] }]]);
    await expect(hydrateSession(log, 's1', foreign)).rejects.toBeInstanceOf(ClusterError);
    expect(log.lastSeq('session/s1')).toBe(0);
  });
});
