import { readFile } from 'node:fs/promises';
import { MemoryStoreError } from '../memory-errors.ts';

/** Matching lines found by {@link grepFiles}, capped. */
export interface GrepResult {
  /** `file:line:text` lines: absolute canonical path, 1-based line number, the line (long lines shortened). */
  readonly matches: string[];
  /** True when more lines matched than were returned. */
  readonly truncated: boolean;
}

/** Default cap on {@link GrepResult.matches}. */
export const GREP_LIMIT = 200;
/** Longest line text reported; longer lines end in `…`. */
export const GREP_LINE_CHARS = 500;

/**
 * Compiles a grep pattern: a JavaScript regular expression source, no flags.
 *
 * @throws MemoryStoreError `invalid_argument` when the pattern is empty or not a valid regular expression.
 */
export function compileGrepPattern(pattern: string): RegExp {
  if (pattern === '') throw new MemoryStoreError('invalid_argument', 'The grep pattern is empty', { pattern });
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new MemoryStoreError(
      'invalid_argument',
      `Invalid regular expression ${JSON.stringify(pattern)}: ${(error as Error).message}`,
      { pattern },
      { cause: error },
    );
  }
}

/**
 * Searches `files` (in the given order) line by line for `regex`; lines split on LF or CRLF. Files that cannot be
 * read or contain a NUL byte (binary) are skipped. Stops after `limit` matches.
 */
export async function grepFiles(files: readonly string[], regex: RegExp, limit = GREP_LIMIT): Promise<GrepResult> {
  const matches: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    if (text.includes('\0')) continue;
    const lines = text.split(/\r?\n/);
    if (lines.at(-1) === '') lines.pop();
    for (const [index, line] of lines.entries()) {
      // A pattern with the g or y flag would carry lastIndex between lines; ours never has flags, reset anyway.
      regex.lastIndex = 0;
      if (!regex.test(line)) continue;
      if (matches.length === limit) return { matches, truncated: true };
      matches.push(`${file}:${index + 1}:${shorten(line)}`);
    }
  }
  return { matches, truncated: false };
}

function shorten(line: string): string {
  if (line.length <= GREP_LINE_CHARS) return line;
  let end = GREP_LINE_CHARS;
  // Never cut between the two halves of a surrogate pair.
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${line.slice(0, end)}…`;
}
