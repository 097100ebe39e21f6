import { readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { MemoryStoreError, errnoCode } from './memory-errors.ts';

// Same bound as Linux's MAXSYMLINKS: a longer chain is a loop or an attack.
const MAX_LINK_HOPS = 40;

/**
 * Canonical absolute form of `target`, computed before any sandbox rule runs: `path.resolve` (which
 * folds `.`, `..` and `//`), then `realpath` of the deepest ancestor that exists, with the missing rest appended.
 * A dangling symlink on the way is followed by hand, so a link pointing at a not-yet-existing file outside the tree
 * still canonicalises to that outside location.
 *
 * `..` is folded lexically, before links are resolved. That differs from the kernel's walk when `..` follows a
 * symlink, so callers must operate on the returned path, never on the raw one: then what was checked is what gets
 * touched.
 *
 * @throws MemoryStoreError `path_refused` on a symlink loop; the fs error for anything but a missing component.
 */
export async function canonicalPath(target: string): Promise<string> {
  return resolveFrom(path.resolve(target), 0);
}

async function resolveFrom(absolute: string, hops: number): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw loopError(absolute);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return path.join(real, ...missing.reverse());
    } catch (error) {
      const code = errnoCode(error);
      if (code === 'ELOOP') throw loopError(absolute);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const link = await readLinkOrNull(current);
    if (link !== null) {
      const followed = path.resolve(path.dirname(current), link);
      return resolveFrom(path.join(followed, ...missing.reverse()), hops + 1);
    }
    const parent = path.dirname(current);
    // Only reachable when even the filesystem root does not resolve; nothing more to canonicalise.
    if (parent === current) return absolute;
    missing.push(path.basename(current));
    current = parent;
  }
}

async function readLinkOrNull(file: string): Promise<string | null> {
  try {
    return await readlink(file);
  } catch (error) {
    const code = errnoCode(error);
    // EINVAL: exists but is not a link; ENOENT/ENOTDIR: does not exist.
    if (code === 'EINVAL' || code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

function loopError(target: string): MemoryStoreError {
  return new MemoryStoreError('path_refused', `Refused ${JSON.stringify(target)}: too many symbolic links (a loop?)`, {
    path: target,
    rule: 'symlink-loop',
  });
}
