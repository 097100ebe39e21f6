import type { TokenCount } from '../tokens/budgeted-read.ts';
import { truncateHeadTail } from '../tokens/head-tail-truncate.ts';
import { fillLabel, loadPromptLabels } from '../templates/prompt-labels.ts';
import { renderPrompt } from '../templates/prompt-registry.ts';

/**
 * The "Recent user input (verbatim)" block of the rebuilt context: the user's
 * latest messages word for word, newest kept first, each long one cut to its head and tail.
 */

/** One user message of the main slice: its id and its text (non-synthetic text parts joined with newlines). */
export interface RecentUserMessage {
  readonly id: string;
  readonly text: string;
  /**
   * No checkpoint covers the message and it is no longer in the context (a fitted rebuild took it out): it is shown
   * whole, not cut to the per-message cap, unless it does not fit what is left of the section at all.
   */
  readonly verbatim?: boolean | undefined;
}

/** One selected entry. */
export interface RecentUserEntry {
  readonly id: string;
  /** The block shown: the entry label line, a newline, then the (possibly truncated) message text. */
  readonly block: string;
  /** Whether the middle of the message was cut out. */
  readonly truncated: boolean;
}

/** Caps of {@link selectRecentUserInput}, in tokens. */
export interface RecentUserBudget {
  /** Tokens all entries may take together, separators included. */
  readonly totalTokens: number;
  /** Tokens one message's text may take (its label line is not counted); longer texts keep head and tail. */
  readonly perMessageTokens: number;
}

/** Separator between two entries. */
export const RECENT_USER_SEPARATOR = '\n\n';

/**
 * Selects the entries to show. `messages` run oldest → newest (the caller passes at most the newest 200 main-slice
 * user messages). Walks newest → oldest, skipping blank messages; each text longer than `perMessageTokens` keeps a
 * head (≈ 60 %) and a tail (≈ 30 %) around a marker line giving the elided token count and the message id, never
 * splitting a surrogate pair; a `verbatim` message is shown whole, and cut to what is left of the section only when it
 * does not fit in it. The walk stops at the **first** entry that does not fit what is left of
 * `totalTokens` — older entries are dropped then, even small ones. Returns the entries oldest → newest; joined by
 * {@link RECENT_USER_SEPARATOR} they take at most `totalTokens` tokens. A `totalTokens` of 0 selects nothing.
 */
export function selectRecentUserInput(
  messages: readonly RecentUserMessage[],
  budget: RecentUserBudget,
  counter: TokenCount,
): RecentUserEntry[] {
  if (budget.totalTokens <= 0) return [];
  const { recent_user_entry: entryLabel } = loadPromptLabels('rebuild-labels', ['recent_user_entry']);
  const separatorTokens = counter.count(RECENT_USER_SEPARATOR);
  const selected: { entry: RecentUserEntry; tokens: number }[] = [];
  let remaining = budget.totalTokens;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message === undefined || message.text.trim() === '') continue;
    // A message shown whole may take all that is left of the section (its label and a separator aside).
    const labelTokens = counter.count(`${fillLabel(entryLabel, { MESSAGE_ID: message.id })}\n`);
    const cap = message.verbatim === true ? Math.max(0, remaining - labelTokens - separatorTokens - 2) : budget.perMessageTokens;
    const cut = truncateHeadTail(
      message.text,
      cap,
      (elided) =>
        renderPrompt('rebuild-recent-user-elided', { ELIDED_TOKENS: String(elided), MESSAGE_ID: message.id }).trimEnd(),
      counter,
    );
    if (cut === null) break;
    const block = `${fillLabel(entryLabel, { MESSAGE_ID: message.id })}\n${cut.text}`;
    const tokens = counter.count(block) + (selected.length > 0 ? separatorTokens : 0);
    if (tokens > remaining) break;
    remaining -= tokens;
    selected.push({ entry: { id: message.id, block, truncated: cut.truncated }, tokens });
  }
  const entries = selected.map((item) => item.entry).reverse();
  // Token counts of joined texts can exceed the sum of their parts by a little; drop the oldest until it fits.
  while (entries.length > 0 && counter.count(entries.map((e) => e.block).join(RECENT_USER_SEPARATOR)) > budget.totalTokens) {
    entries.shift();
  }
  return entries;
}
