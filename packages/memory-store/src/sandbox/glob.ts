import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { MemoryStoreError } from '../memory-errors.ts';

/** Most alternatives one pattern may expand to through `{a,b}` groups; more is a mistake, not a search. */
const MAX_BRACE_EXPANSIONS = 256;
const GLOB_CHARS = /[*?{]/;

/** Options of {@link compileGlob}. */
export interface GlobOptions {
  /** A pattern without `/` matches the base name at any depth. Default true. */
  readonly matchBase?: boolean;
}

/**
 * Compiles a glob into a predicate over `/`-separated paths relative to the search base. Syntax: `*` (any run of
 * characters except `/`), `?` (one character except `/`), `**` as a whole segment (zero or more directories), and
 * `{a,b}` alternatives (nestable); every other character is literal. A pattern without `/` matches the file's base
 * name at any depth (`*.md` ≡ `**\/*.md`), like ripgrep's `--glob`, unless `matchBase` is false. Dot files are not
 * special.
 *
 * @throws MemoryStoreError `invalid_argument` for an empty pattern, an unclosed `{`, or more than 256 expansions.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): (relativePath: string) => boolean {
  if (pattern === '') throw new MemoryStoreError('invalid_argument', 'The glob pattern is empty', { pattern });
  const matchBase = options.matchBase ?? true;
  const sources = expandBraces(pattern).map((alternative) => {
    const anywhere = matchBase && !alternative.includes('/');
    return globSource(anywhere ? `**/${alternative}` : alternative.replace(/^\/+/, ''));
  });
  const regex = new RegExp(`^(?:${sources.join('|')})$`, 's');
  return (relativePath) => regex.test(relativePath);
}

function globSource(pattern: string): string {
  const segments = pattern.split('/').filter((segment, index, all) => segment !== '' || index === all.length - 1);
  let source = '';
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') source += last ? '.*' : '(?:[^/]+/)*';
    else source += segmentSource(segment) + (last ? '' : '/');
  });
  return source;
}

function segmentSource(segment: string): string {
  let source = '';
  for (const char of segment) {
    if (char === '*') source += source.endsWith('[^/]*') ? '' : '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[\\^$.|+()[\]{}*?/]/g, '\\$&');
  }
  return source;
}

/**
 * Expands `{a,b}` groups (nested groups included) into the list of plain alternatives, left to right.
 *
 * @throws MemoryStoreError `invalid_argument` for an unclosed `{` or more than 256 alternatives.
 */
export function expandBraces(pattern: string): string[] {
  const open = pattern.indexOf('{');
  if (open === -1) return [pattern];
  let depth = 0;
  let close = -1;
  const commas: number[] = [];
  for (let index = open; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === '{') depth += 1;
    else if (char === '}') depth -= 1;
    else if (char === ',' && depth === 1) commas.push(index);
    if (depth === 0) {
      close = index;
      break;
    }
  }
  if (close === -1) {
    throw new MemoryStoreError('invalid_argument', `Unclosed "{" in glob ${JSON.stringify(pattern)}`, { pattern });
  }
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  const bounds = [open, ...commas, close];
  const results: string[] = [];
  for (let index = 0; index < bounds.length - 1; index += 1) {
    const option = pattern.slice((bounds[index] ?? 0) + 1, bounds[index + 1]);
    for (const expanded of expandBraces(head + option + tail)) {
      results.push(expanded);
      if (results.length > MAX_BRACE_EXPANSIONS) {
        throw new MemoryStoreError(
          'invalid_argument',
          `Glob ${JSON.stringify(pattern)} expands to more than ${MAX_BRACE_EXPANSIONS} alternatives`,
          { pattern },
        );
      }
    }
  }
  return results;
}

/**
 * Splits a glob into its literal leading directories and the glob part: `/m/sessions/s1/*.md` →
 * `{ base: '/m/sessions/s1', rest: '*.md' }`. A pattern without glob characters splits at its last segment.
 */
export function splitGlobBase(pattern: string): { base: string; rest: string } {
  const segments = pattern.split('/');
  let first = segments.findIndex((segment) => GLOB_CHARS.test(segment));
  if (first === -1) first = segments.length - 1;
  const base = segments.slice(0, first).join('/');
  return { base: base === '' && pattern.startsWith('/') ? '/' : base, rest: segments.slice(first).join('/') };
}

/**
 * Every regular file under `dir`, depth first in name order, as absolute paths. Symbolic links are skipped (never
 * followed, never listed), so a walk cannot leave the tree it started in; unreadable directories are skipped.
 */
export async function listFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (current: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) files.push(full);
    }
  };
  await walk(dir);
  return files;
}

/** Files found by a glob, capped. */
export interface GlobResult {
  /** Matching files, absolute and canonical, sorted. */
  readonly files: string[];
  /** True when more files matched than were returned. */
  readonly truncated: boolean;
}

/** Default cap on {@link GlobResult.files}. */
export const GLOB_LIMIT = 1000;

/**
 * Files under `base` whose path relative to `base` matches `pattern` ({@link compileGlob} with `options`), at most
 * `limit` (default {@link GLOB_LIMIT}).
 */
export async function globFiles(
  base: string,
  pattern: string,
  options: GlobOptions & { readonly limit?: number } = {},
): Promise<GlobResult> {
  const limit = options.limit ?? GLOB_LIMIT;
  const matches = compileGlob(pattern, options);
  const found = (await listFiles(base)).filter((file) => matches(toPosix(path.relative(base, file))));
  return { files: found.slice(0, limit), truncated: found.length > limit };
}

function toPosix(relative: string): string {
  return path.sep === '/' ? relative : relative.split(path.sep).join('/');
}
