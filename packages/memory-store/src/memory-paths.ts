import path from 'node:path';
import { MemoryStoreError } from './memory-errors.ts';

/**
 * Absolute paths of one session's view of the memory tree:
 * `<root>/{global, projects/<projectId>, sessions/<sessionId>}`.
 */
export interface MemoryPaths {
  /** The memory root, `<data>/memory`. */
  readonly root: string;
  /** `<root>/global`: user-level memory, read-only for agents and never created automatically. */
  readonly globalDir: string;
  /** `<root>/global/MEMORY.md`. */
  readonly globalMemory: string;
  /** `<root>/projects/<projectId>`. */
  readonly projectDir: string;
  /** `<root>/projects/<projectId>/MEMORY.md`: the project memory. */
  readonly memory: string;
  /** `<root>/sessions/<sessionId>`. */
  readonly sessionDir: string;
  /** `<root>/sessions/<sessionId>/checkpoint.md`. */
  readonly checkpoint: string;
  /** `<root>/sessions/<sessionId>/notes.md`: the main agent's scratchpad. */
  readonly notes: string;
  /** `<root>/sessions/<sessionId>/tasks`: per-task files written by task-bound subagents. */
  readonly tasksDir: string;
  /** `<root>/sessions/<sessionId>/checkpoint.invalid.md`: a rejected draft kept for post-mortem. */
  readonly invalidCheckpoint: string;
}

/** Ids that may become a path segment: no dots, no separators, so they can never climb out of their directory. */
export const MEMORY_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Project and session ids naming one session's place in the memory tree. */
export interface MemoryIds {
  readonly projectId: string;
  readonly sessionId: string;
}

/**
 * Computes the memory paths of one session. `root` is resolved to an absolute path (against the process's
 * working directory when relative); nothing is touched on disk.
 *
 * @throws MemoryStoreError `invalid_id` when an id does not match {@link MEMORY_ID_PATTERN}.
 */
export function memoryPaths(root: string, ids: MemoryIds): MemoryPaths {
  assertMemoryId('projectId', ids.projectId);
  assertMemoryId('sessionId', ids.sessionId);
  const absRoot = path.resolve(root);
  const globalDir = path.join(absRoot, 'global');
  const projectDir = path.join(absRoot, 'projects', ids.projectId);
  const sessionDir = path.join(absRoot, 'sessions', ids.sessionId);
  return {
    root: absRoot,
    globalDir,
    globalMemory: path.join(globalDir, 'MEMORY.md'),
    projectDir,
    memory: path.join(projectDir, 'MEMORY.md'),
    sessionDir,
    checkpoint: path.join(sessionDir, 'checkpoint.md'),
    notes: path.join(sessionDir, 'notes.md'),
    tasksDir: path.join(sessionDir, 'tasks'),
    invalidCheckpoint: path.join(sessionDir, 'checkpoint.invalid.md'),
  };
}

function assertMemoryId(field: keyof MemoryIds, value: string): void {
  if (!MEMORY_ID_PATTERN.test(value)) {
    throw new MemoryStoreError(
      'invalid_id',
      `${field} ${JSON.stringify(value)} is not a valid memory id: use 1–128 characters from A–Z, a–z, 0–9, "_" and "-"`,
      { field, value },
    );
  }
}
