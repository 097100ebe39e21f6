import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** fsyncs a directory so a rename inside it survives a crash. Best effort where directories cannot be opened. */
export async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}

/**
 * Replaces `path` with `data` atomically: write a temporary sibling, fsync it, rename it over the target, fsync the
 * directory. A crash leaves either the old or the new content, never a mix.
 */
export async function writeFileAtomic(path: string, data: Uint8Array | string, tmpSuffix: string): Promise<void> {
  const tmp = `${path}.${tmpSuffix}.tmp`;
  const handle = await open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dirname(path));
}
