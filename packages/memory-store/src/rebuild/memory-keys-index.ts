/**
 * The memory keys index of the rebuilt context: the memory files in scope that are not
 * already shown in full above it.
 */

// The files the rebuilt context shows in full: global MEMORY.md, a project's MEMORY.md, and a session's
// checkpoint.md and notes.md (notes.md too: listing it again would repeat what the context already holds).
const PUSHED_KEY = /^(?:global\/MEMORY\.md|projects\/[^/]+\/MEMORY\.md|sessions\/[^/]+\/(?:checkpoint|notes)\.md)$/;

/** A memory key in `/` form without a leading `./` or `/`. */
function normalizeKey(key: string): string {
  return key.trim().replace(/\\/g, '/').replace(/^(?:\.\/|\/)+/, '');
}

/** Whether `key` (relative to the memory root) names a file the rebuilt context already shows in full. */
export function isPushedMemoryKey(key: string): boolean {
  return PUSHED_KEY.test(normalizeKey(key));
}

/**
 * The keys to list: normalized (`/` separators, no leading `./`), blank ones and the pushed files
 * (checkpoint.md, notes.md, project and global MEMORY.md) dropped, duplicates removed, sorted by code unit so the
 * index does not depend on the order a directory listing returned them in.
 */
export function memoryKeysToList(keys: readonly string[]): string[] {
  const listed = new Set<string>();
  for (const key of keys) {
    const normalized = normalizeKey(key);
    if (normalized !== '' && !PUSHED_KEY.test(normalized)) listed.add(normalized);
  }
  return [...listed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
