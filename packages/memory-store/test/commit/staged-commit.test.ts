import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryCommitJournal } from '../../src/commit/commit-journal.ts';
import { HistoryStore, contentHash } from '../../src/commit/history-store.ts';
import {
  commitFiles,
  committedPaths,
  fileVersions,
  liveMatchesHistory,
  recoverCommits,
  unappliedCommits,
} from '../../src/commit/staged-commit.ts';

describe('staged commit', () => {
  let dir: string;
  let root: string;
  let history: HistoryStore;
  let journal: MemoryCommitJournal;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-commit-'));
    root = join(dir, 'memory');
    await mkdir(root);
    history = new HistoryStore(join(dir, 'history'));
    journal = new MemoryCommitJournal();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const base = () => ({ memoryRoot: root, history, journal, writerId: 'w1', reason: 'writer' as const, at: 1 });

  it('replaces every file, keeps each version and lists them in order', async () => {
    const rel = 'sessions/s1/checkpoint.md';
    await commitFiles({ ...base(), commitId: 'c1' }, new Map([[rel, 'one'], ['projects/p/MEMORY.md', 'mem']]));
    await commitFiles({ ...base(), commitId: 'c2' }, new Map([[rel, 'two']]));
    expect(await readFile(join(root, rel), 'utf8')).toBe('two');
    const versions = await fileVersions(journal, rel);
    expect(versions.map((v) => v.hash)).toEqual([contentHash('one'), contentHash('two')]);
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect((await history.get(versions[0]!.hash)).toString()).toBe('one');
    expect(await committedPaths(journal)).toEqual(['projects/p/MEMORY.md', rel]);
    expect(await liveMatchesHistory(root, journal, rel)).toBe(true);
    await writeFile(join(root, rel), 'edited by hand');
    expect(await liveMatchesHistory(root, journal, rel)).toBe(false);
  });

  it('rolls a prepared commit forward on recovery and changes nothing when the crash came before the intent', async () => {
    const rel = 'sessions/s1/checkpoint.md';
    await commitFiles({ ...base(), commitId: 'c1' }, new Map([[rel, 'old']]));
    // Crash right after the intent was journaled: nothing live has changed yet.
    await expect(
      commitFiles(
        {
          ...base(),
          commitId: 'c2',
          onStep: (step) => {
            if (step === 'prepared') throw new Error('crash');
          },
        },
        new Map([[rel, 'new'], ['sessions/s1/notes.md', 'notes']]),
      ),
    ).rejects.toThrow('crash');
    expect(await readFile(join(root, rel), 'utf8')).toBe('old');
    expect((await unappliedCommits(journal)).map((c) => c.commitId)).toEqual(['c2']);
    const recovered = await recoverCommits({ memoryRoot: root, history, journal });
    expect(recovered.map((c) => c.commitId)).toEqual(['c2']);
    expect(await readFile(join(root, rel), 'utf8')).toBe('new');
    expect(await readFile(join(root, 'sessions/s1/notes.md'), 'utf8')).toBe('notes');
    expect(await recoverCommits({ memoryRoot: root, history, journal })).toEqual([]);

    // A crash while storing contents leaves no intent: recovery does nothing.
    await expect(
      commitFiles({ ...base(), commitId: 'c3', onStep: (s) => { if (s === 'stored') throw new Error('crash'); } }, new Map([[rel, 'newer']])),
    ).rejects.toThrow('crash');
    expect(await recoverCommits({ memoryRoot: root, history, journal })).toEqual([]);
    expect(await readFile(join(root, rel), 'utf8')).toBe('new');
  });

  it('refuses paths outside the memory root before storing anything', async () => {
    for (const rel of ['../escape.md', '/etc/passwd', 'a/../../b.md']) {
      await expect(commitFiles({ ...base(), commitId: 'x' }, new Map([[rel, 'x']]))).rejects.toMatchObject({ code: 'path_refused' });
    }
    expect([...journal.entries()]).toEqual([]);
  });
});

describe('history store', () => {
  it('stores the same content from many concurrent puts without a temp-file race', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-history-'));
    try {
      const history = new HistoryStore(join(dir, 'history'));
      const hashes = await Promise.all(Array.from({ length: 50 }, () => history.put('# Session notes\n')));
      expect(new Set(hashes).size).toBe(1);
      expect((await history.get(hashes[0]!)).toString()).toBe('# Session notes\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
