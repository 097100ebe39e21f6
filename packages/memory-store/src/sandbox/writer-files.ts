import { constants } from 'node:fs';
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type ApplyPatchResult, applyPatchTransaction } from './apply-patch-transaction.ts';
import { type GlobResult, compileGlob, globFiles, listFiles, splitGlobBase } from './glob.ts';
import { type GrepResult, compileGrepPattern, grepFiles } from './grep.ts';
import { MemoryStoreError, errnoCode } from '../memory-errors.ts';
import type { MemoryPaths } from '../memory-paths.ts';
import { checkMemoryWrite, confineToMemoryRoot } from './write-guard.ts';
import { type MemoryActor, allowedWritePaths } from './write-rules.ts';

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

/** Options of {@link createWriterFiles}. */
export interface WriterFilesOptions {
  /** `memory.disable_write`: refuse every write, edit and patch (reads, glob and grep still work). Default false. */
  readonly disableWrite?: boolean;
}

/** The checkpoint writer's sandboxed file operations. */
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
   * @throws MemoryStoreError `path_refused` when the write guard ({@link checkMemoryWrite}, writer rules) refuses
   *   the target; `details.rule` is the guard's rule id and `details.allowed` the allowed paths.
   */
  write(target: string, content: string): Promise<WriteResult>;
  /**
   * Replaces `oldString` by `newString` in an existing writer-owned file. Without `replaceAll`, `oldString` must
   * occur exactly once.
   * @throws MemoryStoreError `path_refused`, `not_found`, `edit_mismatch` (not found, or ambiguous),
   *   `invalid_argument` (empty `oldString`, or identical strings).
   */
  edit(target: string, oldString: string, newString: string, replaceAll?: boolean): Promise<EditResult>;
  /**
   * Files matching a glob ({@link compileGlob}: `*`, `**`, `?`, `{a,b}`; a relative pattern without `/` matches base
   * names at any depth), searched under `searchPath` (default: the memory root). An absolute pattern carries its own
   * base (its leading literal directories), is matched from there only, and `searchPath` is then ignored. A missing
   * base yields no files. Symlinks are never followed. At most 1000 files.
   * @throws MemoryStoreError `path_refused` (base outside the memory root), `not_a_file` (base is a file),
   *   `invalid_argument` (bad pattern).
   */
  glob(pattern: string, searchPath?: string): Promise<GlobResult>;
  /**
   * Lines matching a JavaScript regular expression, as `file:line:text`, in the file `searchPath` or the files
   * under the directory `searchPath` (default: the memory root) whose relative path matches the glob `include`.
   * At most 200 matches.
   * @throws MemoryStoreError `path_refused` (outside the memory root), `not_found` (missing `searchPath`),
   *   `invalid_argument` (bad regular expression or glob).
   */
  grep(pattern: string, searchPath?: string, include?: string): Promise<GrepResult>;
  /**
   * Applies an OpenAI-style `*** Begin Patch` … `*** End Patch` patch, all or nothing: every touched path (both
   * sides of a move) must pass the writer rules, and every hunk must match before any file is written. Deleting
   * or moving away `checkpoint.md`, `notes.md` or `MEMORY.md` is refused (only spillovers may be deleted).
   * @throws MemoryStoreError as {@link applyPatchTransaction}.
   */
  applyPatch(patch: string): Promise<ApplyPatchResult>;
  /** Human-readable list of the absolute paths (and spillover patterns) the writer may write. */
  readonly allowedWrites: readonly string[];
}

/** Files a patch may change but never delete: without them the next rebuild has nothing to read. */
const PRIMARY_FILES = new Set(['checkpoint.md', 'notes.md', 'MEMORY.md']);

/**
 * Creates the writer's file API for one session. Every target is canonicalised first ({@link canonicalPath}) and the
 * operation then runs on the canonical path, never on the raw one. Writes, edits and patches go through the write
 * guard ({@link checkMemoryWrite}) with the writer's rules, keyed on this (parent) session and project: only
 * `checkpoint.md`, `checkpoint-<topic>.md`, `notes.md`, `MEMORY.md` and `MEMORY-<topic>.md`. Reads, glob and grep
 * work anywhere under the memory root.
 */
export function createWriterFiles(paths: MemoryPaths, options: WriterFilesOptions = {}): WriterFiles {
  const actor: MemoryActor = {
    kind: 'writer',
    sessionId: path.basename(paths.sessionDir),
    projectId: path.basename(paths.projectDir),
  };
  const allowedWrites = allowedWritePaths(paths.root, actor);
  const disableWrite = options.disableWrite ?? false;

  function refuse(target: string, canonical: string | null, rule: string, message: string): MemoryStoreError {
    return new MemoryStoreError('path_refused', message, { path: target, canonical, rule, allowed: allowedWrites });
  }

  /** Canonicalises `target` and checks it lies under the memory root; returns the canonical path. */
  async function insideRoot(target: string): Promise<string> {
    const confined = await confineToMemoryRoot(paths.root, target);
    if (confined.ok) return confined.canonical;
    const resolved = confined.canonical === undefined ? '' : ` (resolves to ${confined.canonical})`;
    const message = `Refused ${JSON.stringify(target)}${resolved}: ${confined.why} [rule: ${confined.rule}].`;
    throw refuse(target, confined.canonical ?? null, confined.rule, message);
  }

  async function writable(target: string): Promise<string> {
    const decision = await checkMemoryWrite({ root: paths.root, target, actor, disableWrite });
    if (decision.allowed) return decision.canonical;
    throw new MemoryStoreError('path_refused', decision.message, {
      path: target,
      canonical: decision.canonical ?? null,
      rule: decision.rule,
      allowed: decision.allowed_paths,
    });
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
        const why = 'the file was replaced by a symbolic link since it was checked [rule: symlink].';
        throw refuse(target, canonical, 'symlink', `Refused ${JSON.stringify(target)}: ${why}`);
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
      const canonical = await insideRoot(target);
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

    async glob(pattern, searchPath) {
      const absolute = path.isAbsolute(pattern);
      const split = absolute ? splitGlobBase(pattern) : { base: searchPath ?? paths.root, rest: pattern };
      // An absolute pattern names its directory: `/m/sessions/s1/*.md` must not reach into `s1/tasks/`.
      const options = { matchBase: !absolute };
      compileGlob(split.rest, options);
      const base = await insideRoot(split.base);
      const kind = await entryKind(base);
      if (kind === 'missing') return { files: [], truncated: false };
      if (kind === 'file') {
        const details = { path: split.base, canonical: base };
        throw new MemoryStoreError('not_a_file', `Not a directory: ${split.base}`, details);
      }
      return globFiles(base, split.rest, options);
    },

    async grep(pattern, searchPath, include) {
      const regex = compileGrepPattern(pattern);
      const matches = include === undefined ? () => true : compileGlob(include);
      const target = searchPath ?? paths.root;
      const base = await insideRoot(target);
      const kind = await entryKind(base);
      if (kind === 'missing') {
        throw new MemoryStoreError('not_found', `No such file or directory: ${target}`, { path: target });
      }
      const candidates = kind === 'file' ? [base] : await listFiles(base);
      const from = kind === 'file' ? path.dirname(base) : base;
      const included = candidates.filter((file) => matches(path.relative(from, file).split(path.sep).join('/')));
      return grepFiles(included, regex);
    },

    async applyPatch(patch) {
      return applyPatchTransaction(
        {
          writable,
          assertDeletable(canonical, target) {
            if (!PRIMARY_FILES.has(path.basename(canonical))) return;
            throw refuse(
              target,
              canonical,
              'delete-primary',
              `Refused to delete or move ${JSON.stringify(target)}: checkpoint.md, notes.md and MEMORY.md are edited ` +
                'in place, never deleted; only spillover files may be deleted [rule: delete-primary].',
            );
          },
          async readOrNull(canonical, target) {
            try {
              return await readFile(canonical, 'utf8');
            } catch (error) {
              if (errnoCode(error) === 'ENOENT') return null;
              throw fileError(error, target, canonical);
            }
          },
          write: writeText,
          async remove(canonical, target) {
            try {
              await unlink(canonical);
            } catch (error) {
              throw fileError(error, target, canonical);
            }
          },
        },
        patch,
      );
    },
  };
}

async function entryKind(canonical: string): Promise<'file' | 'directory' | 'missing'> {
  try {
    return (await stat(canonical)).isDirectory() ? 'directory' : 'file';
  } catch (error) {
    const code = errnoCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw error;
  }
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
