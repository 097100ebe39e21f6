import { MemoryStoreError } from '../memory-errors.ts';

/** One hunk of an `*** Update File:` section. */
export interface PatchChunk {
  /** Text after `@@ ` (a line to seek before matching the hunk), when given. */
  readonly context?: string;
  /** Lines the hunk expects: its context (` `) and removed (`-`) lines, in order. */
  readonly oldLines: readonly string[];
  /** Lines that replace them: its context (` `) and added (`+`) lines, in order. */
  readonly newLines: readonly string[];
  /** `*** End of File` followed the hunk: it must match at the end of the file. */
  readonly endOfFile: boolean;
}

/** One file operation of a patch. Paths are as written in the patch (the guard canonicalises them). */
export type PatchOperation =
  | { readonly kind: 'add'; readonly path: string; readonly content: string }
  | { readonly kind: 'delete'; readonly path: string }
  | {
      readonly kind: 'update';
      readonly path: string;
      readonly moveTo?: string;
      readonly chunks: readonly PatchChunk[];
    };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const DELETE = '*** Delete File: ';
const UPDATE = '*** Update File: ';
const MOVE = '*** Move to: ';
const END_OF_FILE = '*** End of File';

/**
 * Parses the `apply_patch` format of OpenAI's tool: `*** Begin Patch`, then any number of `*** Add File: <path>`
 * (every line `+`-prefixed), `*** Delete File: <path>` and `*** Update File: <path>` (optional `*** Move to:`,
 * then hunks opened by `@@` or `@@ <context line>` — the first one may omit it — made of ` `, `-` and `+` lines,
 * optionally closed by `*** End of File`), then `*** End Patch`. CRLF patches are accepted; an empty line inside a
 * hunk is an empty context line, and trailing empty lines of a hunk are dropped.
 *
 * @throws MemoryStoreError `invalid_argument` naming the first offending line (1-based).
 */
export function parsePatch(patch: string): PatchOperation[] {
  const lines = patch.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  let first = 0;
  let last = lines.length - 1;
  while (first <= last && (lines[first] ?? '').trim() === '') first += 1;
  while (last >= first && (lines[last] ?? '').trim() === '') last -= 1;
  const fail = (at: number, why: string): never => {
    throw new MemoryStoreError('invalid_argument', `Invalid patch at line ${at + 1}: ${why}`, { line: at + 1 });
  };
  if ((lines[first] ?? '').trim() !== BEGIN) fail(first, `the patch must start with "${BEGIN}"`);
  if (last <= first || (lines[last] ?? '').trim() !== END) fail(last, `the patch must end with "${END}"`);

  const operations: PatchOperation[] = [];
  let at = first + 1;
  const isHeader = (line: string): boolean => line.startsWith('*** ') && line !== END_OF_FILE;
  while (at < last) {
    const line = lines[at] ?? '';
    if (line.trim() === '') {
      at += 1;
    } else if (line.startsWith(ADD)) {
      const path = fileArgument(line, ADD, at, fail);
      const content: string[] = [];
      for (at += 1; at < last && (lines[at] ?? '').startsWith('+'); at += 1) content.push((lines[at] ?? '').slice(1));
      if (at < last && !isHeader(lines[at] ?? '') && (lines[at] ?? '').trim() !== '') {
        fail(at, 'every line of an added file starts with "+"');
      }
      operations.push({ kind: 'add', path, content: content.map((text) => `${text}\n`).join('') });
    } else if (line.startsWith(DELETE)) {
      operations.push({ kind: 'delete', path: fileArgument(line, DELETE, at, fail) });
      at += 1;
    } else if (line.startsWith(UPDATE)) {
      const path = fileArgument(line, UPDATE, at, fail);
      at += 1;
      let moveTo: string | undefined;
      if ((lines[at] ?? '').startsWith(MOVE)) {
        moveTo = fileArgument(lines[at] ?? '', MOVE, at, fail);
        at += 1;
      }
      const chunks: PatchChunk[] = [];
      while (at < last && !isHeader(lines[at] ?? '')) {
        const parsed = parseChunk(lines, at, last, chunks.length === 0, fail);
        if (parsed.chunk !== null) chunks.push(parsed.chunk);
        at = parsed.next;
      }
      if (chunks.length === 0) fail(at, `"${UPDATE}${path}" needs at least one hunk`);
      operations.push({ kind: 'update', path, ...(moveTo === undefined ? {} : { moveTo }), chunks });
    } else {
      fail(at, `expected "${ADD}", "${DELETE}", "${UPDATE}" or "${END}", got ${JSON.stringify(line)}`);
    }
  }
  if (operations.length === 0) fail(first, 'the patch changes no file');
  return operations;
}

type Fail = (at: number, why: string) => never;

function fileArgument(line: string, prefix: string, at: number, fail: Fail): string {
  const value = line.slice(prefix.length).trim();
  return value === '' ? fail(at, `missing path after "${prefix.trim()}"`) : value;
}

function parseChunk(
  lines: readonly string[],
  start: number,
  last: number,
  firstChunk: boolean,
  fail: Fail,
): { chunk: PatchChunk | null; next: number } {
  let at = start;
  let context: string | undefined;
  const head = lines[at] ?? '';
  if (head === '@@' || head.startsWith('@@ ')) {
    const text = head.slice(2).trim();
    if (text !== '') context = text;
    at += 1;
  } else if (!firstChunk) {
    fail(at, 'a hunk starts with "@@"');
  }
  const body: { kind: ' ' | '-' | '+' | 'blank'; text: string }[] = [];
  let endOfFile = false;
  for (; at < last; at += 1) {
    const line = lines[at] ?? '';
    if (line === END_OF_FILE) {
      endOfFile = true;
      at += 1;
      break;
    }
    if (line === '@@' || line.startsWith('@@ ') || line.startsWith('*** ')) break;
    if (line === '') body.push({ kind: 'blank', text: '' });
    else if (line[0] === ' ' || line[0] === '-' || line[0] === '+') {
      body.push({ kind: line[0], text: line.slice(1) });
    } else fail(at, `a hunk line starts with " ", "-" or "+", got ${JSON.stringify(line)}`);
  }
  while (body.at(-1)?.kind === 'blank') body.pop();
  // A hunk with nothing in it changes nothing; an Update File without any real hunk is refused by the caller.
  if (body.length === 0) return { chunk: null, next: at };
  const oldLines = body.filter((line) => line.kind !== '+').map((line) => line.text);
  const newLines = body.filter((line) => line.kind !== '-').map((line) => line.text);
  return { chunk: { ...(context === undefined ? {} : { context }), oldLines, newLines, endOfFile }, next: at };
}

/**
 * Applies the hunks of one `Update File` to `content`, in order, each searched from where the previous one ended:
 * first an exact line match, then ignoring trailing whitespace, then ignoring surrounding whitespace. A hunk with
 * only `+` lines is inserted after its `@@` context line, or at the end of the file without one. The result ends
 * with a newline.
 *
 * @throws MemoryStoreError `edit_mismatch` naming the file and the hunk whose lines were not found.
 */
export function applyChunks(content: string, chunks: readonly PatchChunk[], label: string): string {
  const lines = content.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const replacements: [start: number, remove: number, insert: readonly string[]][] = [];
  let cursor = 0;
  chunks.forEach((chunk, index) => {
    const mismatch = (what: string, expected: readonly string[]): never => {
      throw new MemoryStoreError(
        'edit_mismatch',
        `Patch hunk ${index + 1} for ${label} does not apply: ${what} not found:\n${expected.join('\n')}`,
        { path: label, hunk: index + 1 },
      );
    };
    if (chunk.context !== undefined) {
      const found = seek(lines, [chunk.context], cursor, false);
      if (found === -1) mismatch('the @@ context line', [chunk.context]);
      cursor = found + 1;
    }
    if (chunk.oldLines.length === 0) {
      const at = chunk.context === undefined ? lines.length : cursor;
      replacements.push([at, 0, chunk.newLines]);
      cursor = at;
      return;
    }
    const found = seek(lines, chunk.oldLines, cursor, chunk.endOfFile);
    if (found === -1) mismatch('the expected lines', chunk.oldLines);
    replacements.push([found, chunk.oldLines.length, chunk.newLines]);
    cursor = found + chunk.oldLines.length;
  });
  for (const [start, remove, insert] of replacements.reverse()) lines.splice(start, remove, ...insert);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

const COMPARATORS: readonly ((a: string, b: string) => boolean)[] = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
];

function seek(lines: readonly string[], pattern: readonly string[], from: number, endOfFile: boolean): number {
  const lastStart = lines.length - pattern.length;
  if (lastStart < from) return -1;
  for (const same of COMPARATORS) {
    const matchesAt = (start: number): boolean =>
      pattern.every((line, offset) => same(lines[start + offset] ?? '', line));
    if (endOfFile && matchesAt(lastStart)) return lastStart;
    for (let start = from; start <= lastStart; start += 1) if (matchesAt(start)) return start;
  }
  return -1;
}
