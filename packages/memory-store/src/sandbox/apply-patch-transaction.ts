import { type PatchOperation, applyChunks, parsePatch } from './apply-patch.ts';
import { MemoryStoreError } from '../memory-errors.ts';

/**
 * The file operations a patch transaction needs; {@link createWriterFiles} supplies guarded ones. `target` is the
 * path as the patch wrote it, for messages.
 */
export interface PatchFileSystem {
  /** Runs the write guard; returns the canonical path or throws `path_refused`. */
  writable(target: string): Promise<string>;
  /** Throws `path_refused` when the file may be written but not deleted (or moved away). */
  assertDeletable(canonical: string, target: string): void;
  /** The file's text, or null when it does not exist. */
  readOrNull(canonical: string, target: string): Promise<string | null>;
  write(canonical: string, target: string, content: string): Promise<void>;
  remove(canonical: string, target: string): Promise<void>;
}

/** One file a patch changed. */
export interface PatchChange {
  readonly action: 'add' | 'update' | 'delete';
  /** Canonical path of the file added, updated (its new place when moved) or deleted. */
  readonly path: string;
  /** Canonical path the file was moved from (`*** Move to:`). */
  readonly movedFrom?: string;
}

/** Result of a patch applied in full. */
export interface ApplyPatchResult {
  /** The changes, in patch order. */
  readonly changes: PatchChange[];
}

interface FileState {
  readonly target: string;
  readonly original: string | null;
  next: string | null;
}

/**
 * Applies a patch ({@link parsePatch}) all or nothing: every path goes through `files.writable` and every hunk is
 * applied in memory first (later operations see earlier ones), so a refused path, a missing file or a hunk that
 * does not match leaves the disk untouched. Only then are files written and deleted; if the disk fails part-way,
 * the files already changed are restored on a best-effort basis and the error is rethrown.
 *
 * @throws MemoryStoreError `invalid_argument` (malformed patch, Add File on an existing file, move onto an
 *   existing file), `path_refused` (guard), `not_found` (Update/Delete of a missing file), `edit_mismatch` (hunk).
 */
export async function applyPatchTransaction(files: PatchFileSystem, patch: string): Promise<ApplyPatchResult> {
  const operations = parsePatch(patch);
  const states = new Map<string, FileState>();
  const state = async (canonical: string, target: string): Promise<FileState> => {
    let entry = states.get(canonical);
    if (entry === undefined) {
      const original = await files.readOrNull(canonical, target);
      entry = { target, original, next: original };
      states.set(canonical, entry);
    }
    return entry;
  };

  const changes: PatchChange[] = [];
  for (const operation of operations) changes.push(await stage(operation, files, state));
  await commit(files, states);
  return { changes };
}

async function stage(
  operation: PatchOperation,
  files: PatchFileSystem,
  state: (canonical: string, target: string) => Promise<FileState>,
): Promise<PatchChange> {
  const canonical = await files.writable(operation.path);
  const entry = await state(canonical, operation.path);
  if (operation.kind === 'add') {
    if (entry.next !== null) {
      throw new MemoryStoreError(
        'invalid_argument',
        `Cannot add ${operation.path}: the file already exists; use "*** Update File:" to change it`,
        { path: operation.path },
      );
    }
    entry.next = operation.content;
    return { action: 'add', path: canonical };
  }
  if (entry.next === null) {
    throw new MemoryStoreError('not_found', `No such file: ${operation.path}`, { path: operation.path, canonical });
  }
  if (operation.kind === 'delete') {
    files.assertDeletable(canonical, operation.path);
    entry.next = null;
    return { action: 'delete', path: canonical };
  }
  const updated = applyChunks(entry.next, operation.chunks, operation.path);
  if (operation.moveTo === undefined) {
    entry.next = updated;
    return { action: 'update', path: canonical };
  }
  const destination = await files.writable(operation.moveTo);
  if (destination === canonical) {
    entry.next = updated;
    return { action: 'update', path: canonical };
  }
  files.assertDeletable(canonical, operation.path);
  const moved = await state(destination, operation.moveTo);
  if (moved.next !== null) {
    throw new MemoryStoreError('invalid_argument', `Cannot move ${operation.path} onto existing ${operation.moveTo}`, {
      path: operation.path,
      destination: operation.moveTo,
    });
  }
  entry.next = null;
  moved.next = updated;
  return { action: 'update', path: destination, movedFrom: canonical };
}

async function commit(files: PatchFileSystem, states: ReadonlyMap<string, FileState>): Promise<void> {
  const done: [string, FileState][] = [];
  try {
    for (const [canonical, entry] of states) {
      if (entry.next === entry.original) continue;
      if (entry.next === null) await files.remove(canonical, entry.target);
      else await files.write(canonical, entry.target, entry.next);
      done.push([canonical, entry]);
    }
  } catch (error) {
    for (const [canonical, entry] of done.reverse()) {
      try {
        if (entry.original === null) await files.remove(canonical, entry.target);
        else await files.write(canonical, entry.target, entry.original);
      } catch {
        // Best effort: the original error below is the one worth reporting.
      }
    }
    throw error;
  }
}
