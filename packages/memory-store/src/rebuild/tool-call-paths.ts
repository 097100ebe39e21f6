/**
 * File paths named by a tool call's arguments, for the "files touched" list of the extractive summary: values of
 * path-like keys (`path`, `file_path`, `notebook_path`, `paths: […]`, …) at any depth, and the file headers of
 * patch texts (`*** Update File: x`, `*** Move to: y`, `+++ b/z`).
 */

// Keys whose string value (or array of strings) is a file path; compared lower-cased without `_`/`-`.
const PATH_KEYS = new Set([
  'path',
  'paths',
  'filepath',
  'filepaths',
  'file',
  'files',
  'filename',
  'filenames',
  'targetfile',
  'notebookpath',
  'sourcepath',
  'destinationpath',
  'oldpath',
  'newpath',
]);
// Keys whose string value may be a patch.
const PATCH_KEYS = new Set(['patch', 'diff', 'input']);
const PATCH_HEADER = /^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ b\/|--- a\/)(.+)$/gm;
const MAX_DEPTH = 4;
const MAX_PATH_CHARS = 4_096;

function normalizedKey(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, '');
}

function asPath(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const path = value.trim();
  return path !== '' && path.length <= MAX_PATH_CHARS && !/[\r\n\0]/.test(path) ? path : undefined;
}

function patchPaths(text: string): string[] {
  const paths: string[] = [];
  for (const match of text.matchAll(PATCH_HEADER)) {
    const path = asPath(match[1]);
    if (path !== undefined && path !== '/dev/null') paths.push(path);
  }
  return paths;
}

/** The paths in `args` (parsed tool-call arguments, or their raw text), in order of appearance, deduplicated. */
export function toolCallPaths(args: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    for (const [key, inner] of Object.entries(value)) {
      const name = normalizedKey(key);
      if (PATH_KEYS.has(name)) {
        for (const item of Array.isArray(inner) ? inner : [inner]) {
          const path = asPath(item);
          if (path !== undefined) found.push(path);
        }
      } else if (PATCH_KEYS.has(name) && typeof inner === 'string') {
        found.push(...patchPaths(inner));
      }
      if (typeof inner === 'object') visit(inner, depth + 1);
    }
  };
  if (typeof args === 'string') found.push(...patchPaths(args));
  else visit(args, 0);
  return [...new Set(found)];
}
