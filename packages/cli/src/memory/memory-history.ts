import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { HistoryStore, committedPaths, contentHash, fileVersions, type FileVersion } from '@baton/memory-store';
import { EventLogCommitJournal, LmdbEventLog } from '@baton/runtime';
import { MemoryCommandError } from './memory-scope.ts';

/** The committed history of a data directory: the journal in `<data>/events`, contents in `<data>/history`. */
export interface MemoryHistory {
  readonly dataDir: string;
  /** `<data>/memory`, what committed paths are relative to. */
  readonly memoryRoot: string;
  readonly journal: EventLogCommitJournal;
  readonly history: HistoryStore;
  close(): Promise<void>;
}

/** One committed version as `baton memory log` shows it. */
export interface VersionView extends FileVersion {
  readonly bytes: number;
  /** The live file has this version's content (only the newest such version is marked). */
  readonly live: boolean;
}

/** How the live file relates to the committed versions. */
export type LiveState =
  | { readonly state: 'current'; readonly version: number }
  | { readonly state: 'changed'; readonly version: number | null }
  | { readonly state: 'missing' };

/**
 * Opens the commit journal and the history store of `dataDir`.
 *
 * @throws MemoryCommandError `not_found` when there is no event log.
 */
export function openMemoryHistory(dataDir: string): MemoryHistory {
  const root = resolve(dataDir);
  const events = join(root, 'events');
  if (!existsSync(events)) throw new MemoryCommandError('not_found', `no event log at ${events} (is --data-dir right?)`);
  const log = LmdbEventLog.open({ path: events });
  return {
    dataDir: root,
    memoryRoot: join(root, 'memory'),
    journal: new EventLogCommitJournal(log),
    history: new HistoryStore(join(root, 'history')),
    close: () => log.close(),
  };
}

/**
 * Every committed version of `rel`, oldest first.
 *
 * @throws MemoryCommandError `not_found` when the file was never committed (naming a few files that were).
 */
export async function versionsOf(h: MemoryHistory, rel: string): Promise<FileVersion[]> {
  const versions = await fileVersions(h.journal, rel);
  if (versions.length > 0) return versions;
  const known = await committedPaths(h.journal);
  const hint = known.length === 0 ? 'nothing has been committed yet' : `committed files: ${known.slice(0, 8).join(', ')}${known.length > 8 ? `, … (${known.length})` : ''}`;
  throw new MemoryCommandError('not_found', `no committed version of ${rel} (${hint})`);
}

/**
 * The version a `<version>` argument names: `3` or `v3`.
 *
 * @throws MemoryCommandError `not_found` for anything else or a version that does not exist.
 */
export function pickVersion(versions: readonly FileVersion[], rel: string, arg: string): FileVersion {
  const match = /^v?(\d+)$/i.exec(arg.trim());
  const found = match === null ? undefined : versions.find((v) => v.version === Number(match[1]));
  if (found === undefined) throw new MemoryCommandError('not_found', `no version ${arg} of ${rel} (versions 1–${versions.length}; see baton memory log)`);
  return found;
}

/** The stored content of a version. */
export async function versionContent(h: MemoryHistory, v: FileVersion): Promise<Buffer> {
  try {
    return await h.history.get(v.hash);
  } catch {
    throw new Error(`the content of v${v.version} (${v.hash}) is missing from ${h.history.dir}`);
  }
}

/** The live file's content, or null when it does not exist. */
export async function liveContent(h: MemoryHistory, rel: string): Promise<Buffer | null> {
  return await readFile(join(h.memoryRoot, rel)).catch(() => null);
}

/** Versions with their sizes and the live marker, and how the live file relates to them. */
export async function describeVersions(h: MemoryHistory, versions: readonly FileVersion[], live: Buffer | null): Promise<{ versions: VersionView[]; live: LiveState }> {
  const liveHash = live === null ? null : contentHash(live);
  const liveVersion = versions.findLast((v) => v.hash === liveHash)?.version ?? null;
  const views: VersionView[] = [];
  for (const v of versions) views.push({ ...v, bytes: (await versionContent(h, v)).length, live: v.version === liveVersion });
  const newest = versions.at(-1);
  const state: LiveState =
    live === null
      ? { state: 'missing' }
      : newest !== undefined && newest.hash === liveHash
        ? { state: 'current', version: liveVersion as number }
        : { state: 'changed', version: liveVersion };
  return { versions: views, live: state };
}
