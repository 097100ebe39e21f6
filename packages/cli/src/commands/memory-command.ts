import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { commitFiles, contentHash, fileVersions, recoverCommits, type FileVersion } from '@baton/memory-store';
import type { CliIo } from '../cli-io.ts';
import { runningDaemonPid, daemonPidPath } from '../daemon/daemon-pid-file.ts';
import { groupDigits, shortWriterId } from '../format/numbers.ts';
import { unifiedDiff } from '../memory/line-diff.ts';
import {
  describeVersions,
  liveContent,
  openMemoryHistory,
  pickVersion,
  versionContent,
  versionsOf,
  type LiveState,
  type MemoryHistory,
  type VersionView,
} from '../memory/memory-history.ts';
import { MemoryCommandError, scopePath } from '../memory/memory-scope.ts';
import { EXIT } from '../exit-codes.ts';

export interface MemoryOptions {
  readonly dataDir: string;
}

/** Exit codes of `baton memory`: 0 ok, 1 refused (a daemon is running) or failed, 2 unknown scope, version or log. */
export const MEMORY_EXIT = { ok: EXIT.ok, refused: EXIT.failed, notFound: EXIT.notFound } as const;

const SHORT_HASH = 12;

/** Opens the history, resolves the scope and runs `body`; turns `MemoryCommandError` into one stderr line. */
async function withFile(command: string, scope: string, options: MemoryOptions, io: CliIo, body: (h: MemoryHistory, rel: string) => Promise<number>): Promise<number> {
  let h: MemoryHistory | null = null;
  try {
    h = openMemoryHistory(options.dataDir);
    return await body(h, scopePath(scope, h.memoryRoot));
  } catch (err) {
    if (!(err instanceof MemoryCommandError)) throw err;
    io.err(`baton memory ${command}: ${err.message}`);
    return err.kind === 'refused' ? MEMORY_EXIT.refused : MEMORY_EXIT.notFound;
  } finally {
    await h?.close();
  }
}

/**
 * `…-w2` for a writer of the file's own session, the full id otherwise, `restore` for a restore, `inherited` for the
 * checkpoint a session started from (the one of the session it continues).
 */
function author(v: FileVersion, rel: string): string {
  if (v.reason === 'inherited') return 'inherited';
  if (v.reason === 'restore' || v.writerId === null) return 'restore';
  const session = /^sessions\/([^/]+)\//.exec(rel)?.[1];
  return session === undefined ? v.writerId : shortWriterId(v.writerId, session);
}

function liveWarning(rel: string, live: LiveState, newest: number): string | null {
  if (live.state === 'current') return null;
  if (live.state === 'missing') return `warning: the live file ${rel} is missing (deleted outside a commit)`;
  const matches = live.version === null ? 'it matches no committed version' : `it matches v${live.version}, not the newest v${newest}`;
  return `warning: the live file ${rel} was changed outside a commit: ${matches}`;
}

function logJson(rel: string, versions: readonly VersionView[], live: LiveState): string {
  return JSON.stringify({
    type: 'memory.log',
    rel,
    versions: versions.map((v) => ({
      version: v.version,
      time: new Date(v.at).toISOString(),
      at: v.at,
      hash: v.hash,
      commitId: v.commitId,
      writerId: v.writerId,
      reason: v.reason,
      bytes: v.bytes,
      live: v.live,
    })),
    live,
  });
}

/**
 * `baton memory log <scope>`: every committed version of the file, oldest first — number, commit time, short hash,
 * writer (or `restore`), size, and `← live` on the version the live file has. Warns on stderr when the live file was
 * changed outside a commit. With `json`, one JSON object.
 */
export async function runMemoryLog(scope: string, options: MemoryOptions & { readonly json: boolean }, io: CliIo): Promise<number> {
  return await withFile('log', scope, options, io, async (h, rel) => {
    const found = await versionsOf(h, rel);
    const { versions, live } = await describeVersions(h, found, await liveContent(h, rel));
    const newest = found.length;
    if (options.json) {
      io.out(logJson(rel, versions, live));
    } else {
      io.out(`${rel}: ${versions.length} version${versions.length === 1 ? '' : 's'} (memory root ${h.memoryRoot})`);
      const authors = versions.map((v) => author(v, rel));
      const bytes = versions.map((v) => `${groupDigits(v.bytes)} bytes`);
      const authorWidth = Math.max(...authors.map((a) => a.length));
      const bytesWidth = Math.max(...bytes.map((b) => b.length));
      const numberWidth = String(newest).length + 1;
      versions.forEach((v, i) => {
        const cells = [`v${v.version}`.padEnd(numberWidth), new Date(v.at).toISOString(), v.hash.slice(0, SHORT_HASH), (authors[i] ?? '').padEnd(authorWidth), (bytes[i] ?? '').padStart(bytesWidth)];
        io.out(`  ${cells.join('  ')}${v.live ? '  ← live' : ''}`);
      });
    }
    const warning = liveWarning(rel, live, newest);
    if (warning !== null) io.err(warning);
    return MEMORY_EXIT.ok;
  });
}

function label(rel: string, v: FileVersion | null, at: string): string {
  return v === null ? `${rel} (live)` : `${rel} v${v.version} (${at})`;
}

/**
 * `baton memory diff <scope> <from> [<to>]`: a unified line diff from one version to another, or to the live file
 * when `to` is omitted (`live` names it explicitly). Prints nothing when they are equal.
 */
export async function runMemoryDiff(scope: string, from: string, to: string | undefined, options: MemoryOptions, io: CliIo): Promise<number> {
  return await withFile('diff', scope, options, io, async (h, rel) => {
    const versions = await versionsOf(h, rel);
    const side = async (arg: string): Promise<{ text: string; label: string }> => {
      if (arg === 'live') {
        const live = await liveContent(h, rel);
        return { text: live === null ? '' : live.toString('utf8'), label: live === null ? `${rel} (live, missing)` : label(rel, null, '') };
      }
      const v = pickVersion(versions, rel, arg);
      return { text: (await versionContent(h, v)).toString('utf8'), label: label(rel, v, new Date(v.at).toISOString()) };
    };
    const before = await side(from);
    const after = await side(to ?? 'live');
    for (const line of unifiedDiff(before.text, after.text, { from: before.label, to: after.label })) io.out(line);
    return MEMORY_EXIT.ok;
  });
}

/**
 * `baton memory restore <scope> <version>`: commits the version's content again as a new version (reason
 * `restore`, through `commitFiles`, so history is never rewritten) and prints the new version number. Refuses while
 * `baton daemon` runs on the data directory (the event log takes one writing process at a time); interrupted
 * commits are rolled forward first, as the daemon does at start-up.
 */
export async function runMemoryRestore(scope: string, version: string, options: MemoryOptions, io: CliIo): Promise<number> {
  return await withFile('restore', scope, options, io, async (h, rel) => {
    const pid = runningDaemonPid(h.dataDir);
    if (pid !== null) {
      throw new MemoryCommandError(
        'refused',
        `a daemon seems to be running on ${h.dataDir} (pid ${pid}, from ${daemonPidPath(h.dataDir)}); stop it first — ` +
          'the event log takes one writing process at a time (remove the pid file if that process is not a baton daemon)',
      );
    }
    const recovered = await recoverCommits(h);
    if (recovered.length > 0) io.out(`rolled forward ${recovered.length} interrupted commit${recovered.length === 1 ? '' : 's'} first`);
    const versions = await versionsOf(h, rel);
    const chosen = pickVersion(versions, rel, version);
    const content = await versionContent(h, chosen);
    const newest = versions.at(-1) as FileVersion;
    const live = await liveContent(h, rel);
    if (newest.hash === chosen.hash && live !== null && contentHash(live) === chosen.hash) {
      io.out(`${rel} already has the content of v${chosen.version} (newest v${newest.version}, live): nothing to restore`);
      return MEMORY_EXIT.ok;
    }
    const record = await commitFiles(
      { memoryRoot: h.memoryRoot, history: h.history, journal: h.journal, commitId: `restore-${randomUUID()}`, writerId: null, reason: 'restore', at: Date.now() },
      new Map([[rel, content]]),
    );
    const restored = (await fileVersions(h.journal, rel)).at(-1) as FileVersion;
    io.out(`restored ${rel} to the content of v${chosen.version} as v${restored.version} (commit ${record.commitId})`);
    io.out(`  live file ${join(h.memoryRoot, rel)}`);
    return MEMORY_EXIT.ok;
  });
}
