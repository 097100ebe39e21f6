import type { ConversationItem } from '../conversation-view.ts';

/** The four absolute paths a writer task states. Only `checkpoint` is required. */
export interface WriterPaths {
  readonly checkpoint: string;
  readonly memory: string | undefined;
  readonly taskMemDir: string | undefined;
  readonly notes: string | undefined;
}

/** Where the writer task sits in a request, and what it says. */
export interface WriterTask {
  readonly index: number;
  readonly text: string;
  readonly paths: WriterPaths;
}

function pathLine(text: string, key: string): string | undefined {
  // `KEY = /abs/path`, tolerating extra spaces, list markers and backticks/quotes around key or value.
  const match = new RegExp(`^[ \\t>*-]*\`?${key}\`?[ \\t]*=[ \\t]*(\\S.*?)[ \\t]*$`, 'm').exec(text);
  const value = match?.[1]?.replace(/^[`"']+|[`"']+$/g, '');
  return value === undefined || value === '' ? undefined : value;
}

/** Parses the `CHECKPOINT_PATH = …` family of lines; `undefined` when there is no checkpoint path. */
export function parseWriterPaths(text: string): WriterPaths | undefined {
  const checkpoint = pathLine(text, 'CHECKPOINT_PATH');
  if (checkpoint === undefined) return undefined;
  return {
    checkpoint,
    memory: pathLine(text, 'MEMORY_PATH'),
    taskMemDir: pathLine(text, 'TASK_MEM_DIR'),
    notes: pathLine(text, 'NOTES_PATH'),
  };
}

// Writer-run follow-ups that re-enter the writer after a write: the brief's "validation" wording, the
// "EXTRACTION REQUIRED" reflection and Baton's structure reflection (prompts/validation-reflection.md).
const REFLECTION = /validation|EXTRACTION REQUIRED|violat|do not have the structure|correct only the problems|over (?:their|its) (?:token )?budget/i;

/** Whether a user message asks the writer to fix what it wrote (a validation or extraction reflection). */
export function isReflection(text: string): boolean {
  return REFLECTION.test(text);
}

/**
 * The writer task of the current run: the earliest user item stating a `CHECKPOINT_PATH` in the trailing writer run.
 * Reflections and reminders repeat the paths, so the search walks back from the end over assistant and tool items,
 * user items that only carry tool results (Anthropic's), and writer follow-ups, and stops at the first ordinary user
 * message of the coding conversation. Works on any API through the neutral items.
 */
export function findWriterTask(items: readonly ConversationItem[]): WriterTask | undefined {
  let found: WriterTask | undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item?.role !== 'user') continue;
    const paths = parseWriterPaths(item.text);
    if (paths !== undefined) found = { index: i, text: item.text, paths };
    else if (found !== undefined && item.toolResults.length === 0 && !isReflection(item.text)) break;
  }
  return found;
}

const BULLET = /^\s*(?:[-*+]\s|\d+[.)]\s|[🔵🔄🟡✅❌])/u;

// A heading-like line naming the task tree ("Task tree:", "## Current task tree (from the task tool)"), not a
// sentence of the prompt that merely mentions §4.
const TREE_HEADING = /^\s*(?:#+\s*)?(?:the\s+)?(?:current\s+|parent\s+|session(?:'s)?\s+)?task tree\b[^.]{0,60}$/i;

/**
 * The task tree a writer task inlines: the bullet lines following the last heading-like "task tree" line (blank
 * lines before the first bullet are skipped). `[]` when there is none.
 */
export function inlinedTaskTree(taskText: string): string[] {
  const lines = taskText.split('\n');
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!TREE_HEADING.test(lines[start] ?? '')) continue;
    const tree: string[] = [];
    for (const line of lines.slice(start + 1)) {
      if (line.trim() === '') {
        if (tree.length > 0) break;
        continue;
      }
      if (!BULLET.test(line)) break;
      tree.push(line.replace(/\s+$/, ''));
    }
    if (tree.length > 0) return tree;
  }
  return [];
}
