import { constants } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { canonicalPath } from './canonical-path.ts';
import { MemoryStoreError, errnoCode } from './memory-errors.ts';
import type { MemoryPaths } from './memory-paths.ts';

/** Line window for {@link WriterFiles.read}. */
export interface WriterReadOptions {
  /** 1-based number of the first line to return. Default 1. */
  readonly offset?: number;
  /** Maximum number of lines to return. Default: to the end of the file. */
  readonly limit?: number;
}

/** Result of a successful write. */
export interface WriteResult {
  /** Canonical absolute path that was written. */
  readonly path: string;
  /** Number of UTF-8 bytes written. */
  readonly bytes: number;
}

/** Result of a successful edit. */
export interface EditResult {
  /** Canonical absolute path that was edited. */
  readonly path: string;
  /** Number of occurrences replaced. */
  readonly replacements: number;
}

/** The checkpoint writer's sandboxed file operations (SPEC §2.7). Glob and grep are not built yet. */
export interface WriterFiles {
  /**
   * Returns the file's text unchanged (no line numbers), or the lines selected by `offset`/`limit`. Any regular file
   * under the memory root may be read.
   * @throws MemoryStoreError `path_refused` (outside the memory root or not absolute), `not_found`, `not_a_file`,
   *   `invalid_argument` (offset/limit not positive integers).
   */
  read(target: string, options?: WriterReadOptions): Promise<string>;
  /**
   * Replaces the whole file (creating it when absent) with `content`.
   * @throws MemoryStoreError `path_refused` when the target is not a writer-owned file of this session/project.
   */
  write(target: string, content: string): Promise<WriteResult>;
  /**
   * Replaces `oldString` by `newString` in an existing writer-owned file. Without `replaceAll`, `oldString` must
   * occur exactly once.
   * @throws MemoryStoreError `path_refused`, `not_found`, `edit_mismatch` (not found, or ambiguous),
   *   `invalid_argument` (empty `oldString`, or identical strings).
   */
  edit(target: string, oldString: string, newString: string, replaceAll?: boolean): Promise<EditResult>;
  /** Human-readable list of the absolute paths (and spillover patterns) the writer may write. */
  readonly allowedWrites: readonly string[];
}

// Spillover topics: short, and made of characters that cannot form a path.
const SESSION_FILE = /^(?:checkpoint\.md|notes\.md|checkpoint-[A-Za-z0-9_-]{1,80}\.md)$/;
const PROJECT_FILE = /^(?:MEMORY\.md|MEMORY-[A-Za-z0-9_-]{1,80}\.md)$/;

/**
 * Creates the writer's file API for one session. Every target is canonicalised first ({@link canonicalPath}); the
 * operation then runs on the canonical path, never on the raw one. Writes are allowed only to this session's
 * `checkpoint.md`, `checkpoint-<topic>.md` and `notes.md` and this project's `MEMORY.md` and `MEMORY-<topic>.md`;
 * reads anywhere under the memory root.
 */
export function createWriterFiles(paths: MemoryPaths): WriterFiles {
  const allowedWrites = [
    paths.checkpoint,
    path.join(paths.sessionDir, 'checkpoint-<topic>.md'),
    paths.notes,
    paths.memory,
    path.join(paths.projectDir, 'MEMORY-<topic>.md'),
  ];
  const sessionRel = path.relative(paths.root, paths.sessionDir);
  const projectRel = path.relative(paths.root, paths.projectDir);

  function refuse(target: string, canonical: string | null, rule: string, why: string): MemoryStoreError {
    const resolved = canonical === null ? '' : ` (resolves to ${canonical})`;
    return new MemoryStoreError(
      'path_refused',
      `Refused ${JSON.stringify(target)}${resolved}: ${why}. The checkpoint writer may write only:\n` +
        allowedWrites.map((allowed) => `  ${allowed}`).join('\n'),
      { path: target, canonical, rule, allowed: allowedWrites },
    );
  }

  /** Canonicalises `target` and checks it lies under the memory root; returns canonical path and root. */
  async function insideRoot(target: string): Promise<{ canonical: string; root: string }> {
    if (!path.isAbsolute(target)) {
      throw refuse(target, null, 'absolute-path', 'paths must be absolute; use the paths given in the task verbatim');
    }
    const [canonical, root] = await Promise.all([canonicalPath(target), canonicalPath(paths.root)]);
    if (canonical !== root && !canonical.startsWith(root + path.sep)) {
      throw refuse(target, canonical, 'memory-root', `it is outside the memory tree ${paths.root}`);
    }
    return { canonical, root };
  }

  async function writable(target: string): Promise<string> {
    const { canonical, root } = await insideRoot(target);
    const dir = path.dirname(canonical);
    const name = path.basename(canonical);
    const ownSession = dir === path.join(root, sessionRel) && SESSION_FILE.test(name);
    const ownProject = dir === path.join(root, projectRel) && PROJECT_FILE.test(name);
    if (!ownSession && !ownProject) {
      throw refuse(target, canonical, 'writer-owned-file', 'it is not one of the files the checkpoint writer owns');
    }
    return canonical;
  }

  async function readText(canonical: string, target: string): Promise<string> {
    try {
      return await readFile(canonical, 'utf8');
    } catch (error) {
      throw fileError(error, target, canonical);
    }
  }

  async function writeText(canonical: string, target: string, content: string): Promise<void> {
    await mkdir(path.dirname(canonical), { recursive: true });
    // O_NOFOLLOW: the canonical path has no link in its last component; refuse one swapped in since the check.
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
    let handle;
    try {
      handle = await open(canonical, flags, 0o644);
    } catch (error) {
      if (errnoCode(error) === 'ELOOP') {
        throw refuse(target, canonical, 'symlink', 'the file was replaced by a symbolic link');
      }
      throw fileError(error, target, canonical);
    }
    try {
      await handle.writeFile(content, 'utf8');
    } finally {
      await handle.close();
    }
  }

  return {
    allowedWrites,

    async read(target, options = {}) {
      const { offset = 1, limit } = options;
      if (!Number.isInteger(offset) || offset < 1) throw badArgument('offset', offset);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw badArgument('limit', limit);
      const { canonical } = await insideRoot(target);
      const text = await readText(canonical, target);
      if (offset === 1 && limit === undefined) return text;
      // Split after each "\n" so the selected lines keep their own line ends byte for byte.
      const lines = text.split(/(?<=\n)/);
      return lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit).join('');
    },

    async write(target, content) {
      const canonical = await writable(target);
      await writeText(canonical, target, content);
      return { path: canonical, bytes: Buffer.byteLength(content, 'utf8') };
    },

    async edit(target, oldString, newString, replaceAll = false) {
      if (oldString === '') {
        throw new MemoryStoreError('invalid_argument', 'old_string must not be empty; use write to create a file', {
          path: target,
        });
      }
      if (oldString === newString) {
        throw new MemoryStoreError('invalid_argument', 'old_string and new_string are identical: nothing to change', {
          path: target,
        });
      }
      const canonical = await writable(target);
      const text = await readText(canonical, target);
      const count = countOccurrences(text, oldString);
      if (count === 0) {
        throw new MemoryStoreError('edit_mismatch', `old_string was not found in ${target}; read the file and copy the text exactly`, {
          path: target,
          occurrences: 0,
        });
      }
      if (count > 1 && !replaceAll) {
        throw new MemoryStoreError(
          'edit_mismatch',
          `old_string occurs ${count} times in ${target}; include more surrounding text to make it unique, or set replace_all`,
          { path: target, occurrences: count },
        );
      }
      // split/join rather than String.replace: `$&`-style patterns in new_string must stay literal.
      const index = text.indexOf(oldString);
      const updated = replaceAll
        ? text.split(oldString).join(newString)
        : text.slice(0, index) + newString + text.slice(index + oldString.length);
      await writeText(canonical, target, updated);
      return { path: canonical, replacements: replaceAll ? count : 1 };
    },
  };
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

function badArgument(name: string, value: unknown): MemoryStoreError {
  return new MemoryStoreError('invalid_argument', `${name} must be a positive integer, got ${String(value)}`, {
    [name]: value,
  });
}

function fileError(error: unknown, target: string, canonical: string): unknown {
  const code = errnoCode(error);
  if (code === 'ENOENT') {
    return new MemoryStoreError('not_found', `No such file: ${target}`, { path: target, canonical }, { cause: error });
  }
  if (code === 'EISDIR' || code === 'ENOTDIR') {
    return new MemoryStoreError('not_a_file', `Not a regular file: ${target}`, { path: target, canonical }, { cause: error });
  }
  return error;
}
