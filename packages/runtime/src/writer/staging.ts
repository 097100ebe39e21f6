import { cp, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { bootstrapMemory, contentHash, memoryPaths, migrateLegacyMemory, type MemoryPaths } from '@baton/memory-store';

/** Files a writer may change: they are staged, validated and committed together. */
const SESSION_OWNED = /^(?:checkpoint(?:-[A-Za-z0-9_-]{1,80})?\.md|notes\.md)$/;
const PROJECT_OWNED = /^MEMORY(?:-[A-Za-z0-9_-]{1,80})?\.md$/;

async function names(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isFile()).map((e) => e.name);
}

async function copyMatching(from: string, to: string, pattern: RegExp): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const name of await names(from)) if (pattern.test(name)) await cp(join(from, name), join(to, name));
}

/**
 * Stages a writer's working copy under `stagingRoot` (a memory tree of its own): the session's checkpoint files and
 * notes, the project's MEMORY files, the global MEMORY.md and the session's task journals (read-only for the
 * writer). Files that do not exist yet get their templates — in the staging tree only, so a writer that fails
 * leaves the live tree untouched. Returns the staged paths.
 */
export async function stageMemory(live: MemoryPaths, stagingRoot: string, ids: { projectId: string; sessionId: string }): Promise<MemoryPaths> {
  await rm(stagingRoot, { recursive: true, force: true });
  // A legacy lowercase memory.md becomes MEMORY.md in the live tree first, so the writer sees its content.
  await mkdir(live.projectDir, { recursive: true });
  await migrateLegacyMemory(live);
  const staged = memoryPaths(stagingRoot, ids);
  await copyMatching(live.sessionDir, staged.sessionDir, SESSION_OWNED);
  await copyMatching(live.projectDir, staged.projectDir, PROJECT_OWNED);
  await copyMatching(live.globalDir, staged.globalDir, /^MEMORY\.md$/);
  await cp(live.tasksDir, staged.tasksDir, { recursive: true }).catch(() => mkdir(staged.tasksDir, { recursive: true }));
  await bootstrapMemory(staged);
  return staged;
}

/** Hashes of the live writer-owned files when a writer staged them (null: absent), by path relative to the root. */
export type StagedBase = ReadonlyMap<string, string | null>;

/** The hashes of the live files a staging copied (or found absent), to detect concurrent changes at commit time. */
export async function liveBase(staged: MemoryPaths, live: MemoryPaths): Promise<StagedBase> {
  const base = new Map<string, string | null>();
  const scan = async (stagedDir: string, liveDir: string, pattern: RegExp): Promise<void> => {
    for (const name of await names(stagedDir)) {
      if (!pattern.test(name)) continue;
      const current = await readFile(join(liveDir, name)).catch(() => null);
      base.set(relative(staged.root, join(stagedDir, name)), current === null ? null : contentHash(current));
    }
  };
  await scan(staged.sessionDir, live.sessionDir, SESSION_OWNED);
  await scan(staged.projectDir, live.projectDir, PROJECT_OWNED);
  return base;
}

/**
 * The writer-owned staged files whose content differs from the live one (or that are new), keyed by path relative to
 * the memory root. A file that changed live since it was staged (another session's writer committed the project's
 * MEMORY.md meanwhile) is not overwritten: it is reported as a conflict instead of losing that update.
 */
export async function stagedChanges(staged: MemoryPaths, live: MemoryPaths, base?: StagedBase): Promise<{ changes: Map<string, Buffer>; conflicts: string[] }> {
  const out = new Map<string, Buffer>();
  const conflicts: string[] = [];
  const scan = async (stagedDir: string, liveDir: string, pattern: RegExp): Promise<void> => {
    for (const name of await names(stagedDir)) {
      if (!pattern.test(name)) continue;
      const rel = relative(staged.root, join(stagedDir, name));
      const data = await readFile(join(stagedDir, name));
      const current = await readFile(join(liveDir, name)).catch(() => null);
      const currentHash = current === null ? null : contentHash(current);
      if (currentHash === contentHash(data)) continue;
      if (base !== undefined && base.has(rel) && base.get(rel) !== currentHash) {
        conflicts.push(rel);
        continue;
      }
      out.set(rel, data);
    }
  };
  await scan(staged.sessionDir, live.sessionDir, SESSION_OWNED);
  await scan(staged.projectDir, live.projectDir, PROJECT_OWNED);
  return { changes: out, conflicts };
}

/** Removes a writer's staging tree. */
export async function discardStaging(stagingRoot: string): Promise<void> {
  await rm(stagingRoot, { recursive: true, force: true });
}

/** Removes every staging tree (at start-up: no writer survives a restart). */
export async function clearStagingRoot(stagingBase: string): Promise<void> {
  await rm(stagingBase, { recursive: true, force: true });
  await mkdir(stagingBase, { recursive: true });
}
