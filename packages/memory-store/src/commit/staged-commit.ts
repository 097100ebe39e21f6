import { mkdir, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { writeFileAtomic } from './atomic-file.ts';
import type { CommitJournal, CommitRecord, CommittedFile } from './commit-journal.ts';
import { contentHash, type HistoryStore } from './history-store.ts';
import { MemoryStoreError } from '../memory-errors.ts';

/** Steps of a commit, reported to `onStep` (crash tests kill the process between them). */
export type CommitStep = 'stored' | 'prepared' | `applied:${string}` | 'done';

export interface CommitOptions {
  readonly memoryRoot: string;
  readonly history: HistoryStore;
  readonly journal: CommitJournal;
  readonly commitId: string;
  readonly writerId: string | null;
  readonly reason: CommitRecord['reason'];
  readonly at: number;
  readonly onStep?: (step: CommitStep) => void | Promise<void>;
}

function livePath(memoryRoot: string, rel: string): string {
  const clean = normalize(rel);
  if (isAbsolute(clean) || clean.startsWith(`..${sep}`) || clean === '..' || clean.includes('\0')) {
    throw new MemoryStoreError('path_refused', `commit path ${JSON.stringify(rel)} is not inside the memory root`);
  }
  return join(memoryRoot, clean);
}

async function applyFiles(options: Pick<CommitOptions, 'memoryRoot' | 'history' | 'commitId' | 'onStep'>, files: readonly CommittedFile[]): Promise<void> {
  for (const f of files) {
    const target = livePath(options.memoryRoot, f.rel);
    await mkdir(dirname(target), { recursive: true });
    await writeFileAtomic(target, await options.history.get(f.hash), `commit-${options.commitId}`);
    await options.onStep?.(`applied:${f.rel}`);
  }
}

/**
 * Commits new contents for memory files (paths relative to the memory root) so that a crash at any point leaves
 * either every old version or every new one once `recoverCommits` has run:
 * 1. every new content is stored durably in the history store (content-addressed);
 * 2. `commit.prepared` (the intent, with hashes) is journaled durably;
 * 3. each live file is replaced atomically (temp file, fsync, rename) from the stored content;
 * 4. `commit.applied` is journaled.
 * A crash before 2 changes nothing live; after 2, recovery rolls the commit forward from the history store.
 */
export async function commitFiles(options: CommitOptions, contents: ReadonlyMap<string, Uint8Array | string>): Promise<CommitRecord> {
  const files: CommittedFile[] = [];
  for (const [rel, data] of contents) {
    livePath(options.memoryRoot, rel);
    files.push({ rel, hash: await options.history.put(data) });
  }
  await options.onStep?.('stored');
  const record: CommitRecord = { commitId: options.commitId, writerId: options.writerId, reason: options.reason, at: options.at, files };
  await options.journal.append('commit.prepared', record);
  await options.onStep?.('prepared');
  await applyFiles(options, files);
  await options.journal.append('commit.applied', record);
  await options.onStep?.('done');
  return record;
}

/** Prepared commits that were never applied, oldest first. */
export async function unappliedCommits(journal: CommitJournal): Promise<CommitRecord[]> {
  const open = new Map<string, CommitRecord>();
  for (const e of await journal.entries()) {
    if (e.type === 'commit.prepared') open.set(e.record.commitId, e.record);
    else open.delete(e.record.commitId);
  }
  return [...open.values()];
}

/**
 * Finishes every half-done commit found in the journal (roll forward: the new contents are in the history store
 * since before the intent was journaled). Idempotent; run it at start-up before any writer runs.
 */
export async function recoverCommits(options: Pick<CommitOptions, 'memoryRoot' | 'history' | 'journal'>): Promise<CommitRecord[]> {
  const pending = await unappliedCommits(options.journal);
  for (const record of pending) {
    await applyFiles({ ...options, commitId: `${record.commitId}-recover` }, record.files);
    await options.journal.append('commit.applied', record);
  }
  return pending;
}

/** One committed version of a file. */
export interface FileVersion {
  readonly version: number;
  readonly hash: string;
  readonly commitId: string;
  readonly writerId: string | null;
  readonly reason: CommitRecord['reason'];
  readonly at: number;
}

/** Every applied version of `rel`, oldest first (version numbers start at 1). */
export async function fileVersions(journal: CommitJournal, rel: string): Promise<FileVersion[]> {
  const out: FileVersion[] = [];
  for (const e of await journal.entries()) {
    if (e.type !== 'commit.applied') continue;
    const f = e.record.files.find((x) => x.rel === rel);
    if (f === undefined) continue;
    const prev = out.at(-1);
    if (prev?.hash === f.hash && prev.commitId === e.record.commitId) continue;
    out.push({ version: out.length + 1, hash: f.hash, commitId: e.record.commitId, writerId: e.record.writerId, reason: e.record.reason, at: e.record.at });
  }
  return out;
}

/** Paths (relative to the memory root) that have at least one applied version, sorted. */
export async function committedPaths(journal: CommitJournal): Promise<string[]> {
  const paths = new Set<string>();
  for (const e of await journal.entries()) if (e.type === 'commit.applied') for (const f of e.record.files) paths.add(f.rel);
  return [...paths].sort();
}

/** Whether the live file matches the newest applied version (false when it was changed outside a commit). */
export async function liveMatchesHistory(memoryRoot: string, journal: CommitJournal, rel: string): Promise<boolean> {
  const last = (await fileVersions(journal, rel)).at(-1);
  if (last === undefined) return true;
  const live = await readFile(livePath(memoryRoot, rel)).catch(() => null);
  return live !== null && contentHash(live) === last.hash;
}
