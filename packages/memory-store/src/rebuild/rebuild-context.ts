import { type TokenCount, readBudgeted, readSectionAware } from '../tokens/budgeted-read.ts';
import { renderCheckpointIndex } from './checkpoint-index.ts';
import { memoryKeysToList } from './memory-keys-index.ts';
import { loadPromptLabels } from '../templates/prompt-labels.ts';
import { renderPrompt } from '../templates/prompt-registry.ts';
import type { RebuildCaps } from './rebuild-caps.ts';
import { fitSection, isBlank } from './rebuild-section.ts';
import { type LastMessageInfo, renderTailReminder } from './rebuild-tail-reminder.ts';
import {
  RECENT_USER_SEPARATOR,
  type RecentUserEntry,
  type RecentUserMessage,
  selectRecentUserInput,
} from './recent-user-input.ts';
import { type RebuildTask, renderTasksLedger } from './tasks-ledger.ts';
import { defaultTokenCounter } from '../tokens/token-counter.ts';

/**
 * The text of the rebuild boundary message: a pure function of the memory file texts and
 * the session facts the caller gathered. Every section is capped in real tokens, heading included.
 */

/** A writer of **this** session (other sessions' writers are never listed). */
export interface ActiveWriter {
  readonly writerId: string;
  readonly status: string;
  readonly description: string;
}

/** Everything the rebuilt context is rendered from; the caller did all the I/O. */
export interface RebuildContextInput {
  /** The session's task tree, terminal tasks included. */
  readonly tasks: readonly RebuildTask[];
  /** Raw text of checkpoint.md, or null when the file does not exist. */
  readonly checkpoint: string | null;
  /** Raw text of the project's MEMORY.md, or null. */
  readonly projectMemory: string | null;
  /** Raw text of global/MEMORY.md, or null. */
  readonly globalMemory: string | null;
  /** Raw text of the session's notes.md, or null. */
  readonly notes: string | null;
  /** Pending or running writers of this session only. */
  readonly activeWriters: readonly ActiveWriter[];
  /** Main-slice user messages, oldest → newest; at most the newest 200. */
  readonly recentUser: readonly RecentUserMessage[];
  /**
   * The steps after the checkpoint that are no longer in the context (a fitted rebuild took them out), one line each,
   * oldest first; shown newest first within the `uncovered` cap. Absent or empty: no such section.
   */
  readonly uncovered?: readonly string[] | undefined;
  /** Memory files in scope, relative to the memory root; the files shown in full are dropped here. */
  readonly memoryKeys: readonly string[];
  /** The last message before the rebuild, which picks the tail reminder; null when there is none. */
  readonly lastMessage: LastMessageInfo | null;
  /** Absolute session memory directory, for the checkpoint index block. */
  readonly sessionDir: string;
  /** Absolute path of checkpoint.md, for the checkpoint index block. */
  readonly checkpointPath: string;
  /**
   * The context is read where the memory files cannot be (an agent on another machine than the daemon): it names no
   * path of them, does not tell its reader to search them, and lists no memory keys. Default false.
   */
  readonly selfContained?: boolean | undefined;
  /** Token caps (see `resolveRebuildCaps`). */
  readonly caps: RebuildCaps;
  /** Token counter; default the process-wide cached o200k_base counter. */
  readonly counter?: TokenCount | undefined;
}

/** Names of the sections of a rendered context, in output order. */
export const REBUILD_SECTION_NAMES = [
  'checkpoint_index',
  'header',
  'tasks_ledger',
  'checkpoint',
  'uncovered',
  'active_writers',
  'recent_user',
  'project_memory',
  'global_memory',
  'notes',
  'memory_keys',
  'seam',
  'tail',
] as const;

/** Name of one section of the rebuilt context. */
export type RebuildSectionName = (typeof REBUILD_SECTION_NAMES)[number];

/** One section as rendered, with its token count. */
export interface RebuildSection {
  readonly name: RebuildSectionName;
  /** Tokens of `text`. */
  readonly tokens: number;
  /** The section as it appears in the rendered text (heading line included). */
  readonly text: string;
}

/** The rendered boundary message text and its accounting. */
export interface RenderedRebuildContext {
  /** The sections that were rendered, joined by blank lines. */
  readonly text: string;
  /** Tokens of `text`. */
  readonly tokens: number;
  /** The rendered sections in order; absent sections (empty or capped to nothing) are not listed. */
  readonly sections: readonly RebuildSection[];
  /** Ids of `verbatim` user messages that had to be cut (or left out) to fit the section: summarised, not quoted whole. */
  readonly userCut: readonly string[];
}

/** Separator between two sections. */
export const REBUILD_SECTION_SEPARATOR = '\n\n';

const HEADINGS = [
  'tasks_ledger',
  'checkpoint',
  'uncovered',
  'active_writers',
  'recent_user',
  'project_memory',
  'global_memory',
  'notes',
  'memory_keys',
] as const;

/**
 * Renders the rebuilt context. Order: checkpoint index block ({@link renderCheckpointIndex}; "no checkpoints yet"
 * when checkpoint.md is missing or blank), header sentence, `## Tasks ledger` (always, `(none)`
 * when empty; ≤ `tasks_ledger`), `## Session checkpoint` (section-aware, ≤ `checkpoint`), `## Active writers`
 * (≤ `actor_ledger`), `## Recent user input (verbatim)` (≤ `recent_user`, each message ≤ `recent_user_per_msg`),
 * `## Project memory` (section-aware, ≤ `memory`), `## Global memory` (section-aware, ≤ `global`), `## Session notes`
 * (plain budgeted, ≤ `notes`), `## Memory keys index` (≤ `memory_titles`), seam framing, tail reminder. Each cap
 * bounds its whole section, heading included; blank inputs and zero caps leave their section out. Long lists are
 * cut at a line end with a truncation marker.
 *
 * Returns null — the early bail, nothing to rebuild from — when there are no tasks, the checkpoint, project and
 * global memory are all blank, there are no active writers and no recent user entry was selected (notes and memory
 * keys alone do not make a context).
 */
export function renderRebuildContext(input: RebuildContextInput): RenderedRebuildContext | null {
  const counter = input.counter ?? defaultTokenCounter;
  const { caps } = input;
  const headings = loadPromptLabels('rebuild-labels', HEADINGS);

  // The recent-user selection decides the early bail; memoized per body budget for the section fit below.
  const selections = new Map<number, RecentUserEntry[]>();
  const selectRecent = (budget: number): RecentUserEntry[] => {
    let entries = selections.get(budget);
    if (entries === undefined) {
      entries = selectRecentUserInput(
        input.recentUser,
        { totalTokens: budget, perMessageTokens: caps.recent_user_per_msg },
        counter,
      );
      selections.set(budget, entries);
    }
    return entries;
  };
  const firstRecentBudget = caps.recent_user - counter.count(`${headings.recent_user}\n`);
  const recentEntries = caps.recent_user > 0 && firstRecentBudget > 0 ? selectRecent(firstRecentBudget) : [];

  const uncovered = input.uncovered ?? [];
  const bail =
    uncovered.length === 0 &&
    input.tasks.length === 0 &&
    isBlank(input.checkpoint) &&
    isBlank(input.projectMemory) &&
    isBlank(input.globalMemory) &&
    input.activeWriters.length === 0 &&
    recentEntries.length === 0;
  if (bail) return null;

  const rendered: { name: RebuildSectionName; text: string | null }[] = [];
  const add = (name: RebuildSectionName, text: string | null): void => void rendered.push({ name, text });
  const file = (text: string | null): string | null => (isBlank(text) ? null : (text ?? '').trim());
  const sectionAware = (heading: string, text: string | null, cap: number): string | null => {
    const body = file(text);
    return body === null ? null : fitSection(heading, cap, (budget) => readSectionAware(body, budget, counter), counter);
  };
  const plain = (heading: string, body: string | null, cap: number): string | null =>
    body === null ? null : fitSection(heading, cap, (budget) => readBudgeted(body, budget, counter), counter);

  const selfContained = input.selfContained === true;
  add('checkpoint_index', renderCheckpointIndex(input.sessionDir, input.checkpointPath, !isBlank(input.checkpoint), selfContained));
  add('header', renderPrompt(selfContained ? 'rebuild-header-inline' : 'rebuild-header', {}).trimEnd());
  add('tasks_ledger', plain(headings.tasks_ledger, renderTasksLedger(input.tasks), caps.tasks_ledger));
  add('checkpoint', sectionAware(headings.checkpoint, input.checkpoint, caps.checkpoint));
  add(
    'uncovered',
    uncovered.length === 0
      ? null
      : fitSection(headings.uncovered, caps.uncovered, (budget) => newestLinesWithin(renderPrompt('rebuild-uncovered', {}).trimEnd(), uncovered, budget, counter), counter),
  );
  const writers = input.activeWriters.map(
    (writer) => `- ${oneLine(writer.writerId)} — ${oneLine(writer.status)}, "${oneLine(writer.description)}"`,
  );
  add('active_writers', plain(headings.active_writers, writers.length > 0 ? writers.join('\n') : null, caps.actor_ledger));
  add(
    'recent_user',
    recentEntries.length === 0
      ? null
      : fitSection(
          headings.recent_user,
          caps.recent_user,
          (budget) => selectRecent(budget).map((entry) => entry.block).join(RECENT_USER_SEPARATOR),
          counter,
        ),
  );
  add('project_memory', sectionAware(headings.project_memory, input.projectMemory, caps.memory));
  add('global_memory', sectionAware(headings.global_memory, input.globalMemory, caps.global));
  add('notes', plain(headings.notes, file(input.notes), caps.notes));
  // Memory keys name files: a reader that cannot open them gets no list of them.
  const keys = selfContained ? [] : memoryKeysToList(input.memoryKeys).map((key) => `- ${key}`);
  add('memory_keys', plain(headings.memory_keys, keys.length > 0 ? keys.join('\n') : null, caps.memory_titles));
  add('seam', renderPrompt('rebuild-seam', {}).trimEnd());
  add('tail', renderTailReminder(input.lastMessage));

  const present = rendered.filter((section): section is { name: RebuildSectionName; text: string } => section.text !== null);
  const text = present.map((section) => section.text).join(REBUILD_SECTION_SEPARATOR);
  const recentSection = present.find((section) => section.name === 'recent_user');
  const shown = recentSection === undefined ? [] : selections.get(lastRecentBudget(selections)) ?? [];
  const whole = new Set(shown.filter((entry) => !entry.truncated).map((entry) => entry.id));
  return {
    text,
    tokens: counter.count(text),
    sections: present.map((section) => ({ name: section.name, tokens: counter.count(section.text), text: section.text })),
    userCut: input.recentUser.filter((m) => m.verbatim === true && m.text.trim() !== '' && !whole.has(m.id)).map((m) => m.id),
  };
}

/** The body budget the recent-user section was rendered with last (the smallest one tried). */
function lastRecentBudget(selections: ReadonlyMap<number, unknown>): number {
  return Math.min(...selections.keys());
}

/**
 * `intro`, then as many of `lines` as fit `budget` tokens, newest kept (the list is oldest first and so is the result),
 * with a line counting the older ones left out.
 */
function newestLinesWithin(intro: string, lines: readonly string[], budget: number, counter: TokenCount): string {
  const kept: string[] = [];
  let used = counter.count(intro) + 8;
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i] ?? '';
    const tokens = counter.count(line) + 1;
    if (used + tokens > budget) break;
    used += tokens;
    kept.unshift(line);
  }
  const omitted = lines.length - kept.length;
  return [intro, ...(omitted > 0 ? [`(${omitted} earlier step${omitted === 1 ? '' : 's'} left out)`] : []), ...kept].join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
