import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseSections } from '../templates/checkpoint-sections.ts';
import { MemoryStoreError, errnoCode } from '../memory-errors.ts';
import { loadPrompt } from '../templates/prompt-registry.ts';

/**
 * Subagent progress reconciliation. A task-bound subagent keeps a journal
 * at `tasks/<TID>/progress.md`; the runtime stamps it with a `written-at` frontmatter when the subagent stops. The
 * writer integrates a journal into the checkpoint and records the stamp it integrated as a marker on the task's
 * §4 line; the next writer is told only about journals stamped after their marker.
 */

/** A journal to integrate: never reconciled (`NEW`) or stamped after its marker (`CHANGED`). */
export type ProgressItem =
  | { readonly taskId: string; readonly status: 'NEW'; readonly writtenAt: number }
  | { readonly taskId: string; readonly status: 'CHANGED'; readonly writtenAt: number; readonly prior: number };

/** Options of {@link diffProgress}. */
export interface DiffProgressOptions {
  /** Told about an unexpected failure (the diff then reports nothing). Default: ignore. */
  readonly onError?: (error: unknown) => void;
}

const OPEN = '---\n';
const CLOSE = '\n---\n';
const WRITTEN_AT = 'written-at:';
// A marker quoted in prose (`(progress: …)` right after a backtick) is an example, not a record.
const MARKER = /(?<!`)\(progress: tasks\/([^/\s()`]+)\/progress\.md, last-reconciled-written-at: (\d+)\)/g;
const HEADING = 'SUBAGENT PROGRESS to integrate (since last reconcile):';

/** Offsets of the leading `---\n…\n---\n` block, or null when the text does not start with one. */
function frontmatter(text: string): { body: string; end: number } | null {
  if (!text.startsWith(OPEN)) return null;
  // Searching from the opening line's own newline also finds an empty block (`---\n---\n`).
  const close = text.indexOf(CLOSE, OPEN.length - 1);
  if (close === -1) return null;
  return { body: text.slice(OPEN.length, Math.max(OPEN.length, close)), end: close + CLOSE.length };
}

/**
 * The `written-at` stamp of a progress journal: the file must start with a `---\n…\n---\n` frontmatter holding a
 * line that starts with `written-at:`; its value must be a finite number. Returns null otherwise (LF only).
 */
export function parseWrittenAt(text: string): number | null {
  const front = frontmatter(text);
  if (front === null) return null;
  const line = front.body.split('\n').find((candidate) => candidate.startsWith(WRITTEN_AT));
  if (line === undefined) return null;
  const value = line.slice(WRITTEN_AT.length).trim();
  const stamp = Number(value);
  return value !== '' && Number.isFinite(stamp) ? stamp : null;
}

/**
 * Injects the runtime's stamp: a leading `---\nwritten-at: <nowMs>\n---\n` block that replaces any existing
 * leading frontmatter (its other keys included), or is prepended when there is none.
 *
 * @throws MemoryStoreError `invalid_argument` when `nowMs` is not a non-negative integer.
 */
export function stampWrittenAt(text: string, nowMs: number): string {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0) {
    throw new MemoryStoreError('invalid_argument', `written-at must be a non-negative integer of ms, got ${nowMs}`, {
      nowMs,
    });
  }
  const front = frontmatter(text);
  return `${OPEN}${WRITTEN_AT} ${nowMs}${CLOSE}${front === null ? text : text.slice(front.end)}`;
}

/**
 * The reconciliation markers of a checkpoint, `(progress: tasks/<TID>/progress.md, last-reconciled-written-at:
 * <digits>)`, read from its `## §4` section only (none when there is no §4); a marker right after a backtick is
 * ignored. When a task has several markers, the largest stamp counts.
 */
export function parseReconcileMarkers(checkpointText: string): Map<string, number> {
  const markers = new Map<string, number>();
  const taskTree = parseSections(checkpointText).find((section) => /^§4(?:\s|$)/.test(section.title));
  if (taskTree === undefined) return markers;
  for (const match of checkpointText.slice(taskTree.start, taskTree.end).matchAll(MARKER)) {
    const taskId = match[1] ?? '';
    const stamp = Number(match[2]);
    markers.set(taskId, Math.max(stamp, markers.get(taskId) ?? -Infinity));
  }
  return markers;
}

/**
 * Which task journals under `tasksDir` the writer must integrate: for every task directory (in task-id order) whose
 * `progress.md` is readable and stamped, `NEW` without a marker, `CHANGED` (with the `prior` marker) when stamped
 * later than its marker, else nothing. Unreadable or unstamped journals and symbolic links are skipped; a missing
 * `tasksDir` means no tasks. Never throws: an unexpected error is passed to `onError` and the result is empty.
 */
export async function diffProgress(
  tasksDir: string,
  checkpointText: string,
  options: DiffProgressOptions = {},
): Promise<ProgressItem[]> {
  try {
    let entries;
    try {
      entries = await readdir(tasksDir, { withFileTypes: true });
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw error;
    }
    const markers = parseReconcileMarkers(checkpointText);
    const taskIds = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort(compareTaskIds);
    const items: ProgressItem[] = [];
    for (const taskId of taskIds) {
      const journal = await readJournal(path.join(tasksDir, taskId, 'progress.md'));
      const writtenAt = journal === null ? null : parseWrittenAt(journal);
      if (writtenAt === null) continue;
      const prior = markers.get(taskId);
      if (prior === undefined) items.push({ taskId, status: 'NEW', writtenAt });
      else if (writtenAt > prior) items.push({ taskId, status: 'CHANGED', writtenAt, prior });
    }
    return items;
  } catch (error) {
    options.onError?.(error);
    return [];
  }
}

/** The journal's text, or null when it cannot be read; a symbolic link is not followed. */
async function readJournal(file: string): Promise<string | null> {
  try {
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** `T2` before `T10`, `T4` before `T4.1`: runs of digits compare as numbers. */
function compareTaskIds(a: string, b: string): number {
  const left = a.match(/\d+|\D+/g) ?? [];
  const right = b.match(/\d+|\D+/g) ?? [];
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const x = left[index];
    const y = right[index];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    if (numeric && Number(x) !== Number(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The block the writer's task shows for {@link diffProgress}'s items: the heading line, one line per item
 * (`  - <TID> (NEW, written-at=<n>)` or `  - <TID> (CHANGED, written-at=<n>, prior=<p>)`), a blank line and the
 * instruction of `prompts/subagent-progress.md`. The empty string when nothing changed.
 */
export function renderProgressBlock(items: readonly ProgressItem[]): string {
  if (items.length === 0) return '';
  const lines = items.map((item) =>
    item.status === 'NEW'
      ? `  - ${item.taskId} (NEW, written-at=${item.writtenAt})`
      : `  - ${item.taskId} (CHANGED, written-at=${item.writtenAt}, prior=${item.prior})`,
  );
  return `${HEADING}\n${lines.join('\n')}\n\n${loadPrompt('subagent-progress').trimEnd()}`;
}
