import { type TokenCount, readBudgeted } from '../tokens/budgeted-read.ts';
import { prefixWithin, truncateHeadTail } from '../tokens/head-tail-truncate.ts';
import { type ChatMessageLike, contentText, contentToolResults, messageToolCalls } from './message-parts.ts';
import { MemoryStoreError } from '../memory-errors.ts';
import { fillLabel, loadPromptLabels } from '../templates/prompt-labels.ts';
import { renderPrompt } from '../templates/prompt-registry.ts';
import { defaultTokenCounter } from '../tokens/token-counter.ts';
import { toolCallPaths } from './tool-call-paths.ts';

/**
 * The deterministic compaction fallback: when the model cannot be reached to summarize the main slice,
 * an extractive summary quotes it instead — the user's requests verbatim, the files the tools touched, the errors
 * seen and the last assistant message — within a token cap. Same messages and cap, same text.
 */

/** Default cap of {@link extractiveSummary}, in tokens. */
export const DEFAULT_EXTRACTIVE_SUMMARY_CAP = 8_000;

/** Options of {@link extractiveSummary}. */
export interface ExtractiveSummaryOptions {
  /** Most tokens of the summary (default {@link DEFAULT_EXTRACTIVE_SUMMARY_CAP}). */
  readonly capTokens?: number | undefined;
  /** Token counter; default the process-wide cached o200k_base counter. */
  readonly counter?: TokenCount | undefined;
}

// Shares of the cap the secondary lists may take at most; the user's requests get everything left.
const FILES_SHARE = 0.1;
const ERRORS_SHARE = 0.15;
const LAST_ASSISTANT_SHARE = 0.2;
// One error line is cut to this many tokens.
const ERROR_LINE_TOKENS = 120;
// A request that does not fit whole is cut to what is left only if at least this many tokens remain.
const MIN_PARTIAL_TOKENS = 50;
const ERROR_LINE = /error|exception|fail|fatal|traceback|panic/i;
const LABEL_KEYS = [
  'requests',
  'files',
  'errors',
  'last_assistant',
  'none',
  'request_entry',
  'requests_omitted',
  'files_omitted',
  'errors_omitted',
  'elided',
] as const;
type Labels = Readonly<Record<(typeof LABEL_KEYS)[number], string>>;

/**
 * Summarizes `messages` (the main slice, oldest → newest) without a model. Sections, in order: a header saying it
 * is an extractive summary produced without a model; the user's requests verbatim, newest first, as many as fit
 * (the first that does not fit whole is cut to its head and tail when ≥ 50 tokens remain, older ones are counted as
 * omitted); the files named by tool-call arguments, most recently touched first, with the tools that touched them
 * (≤ 10 % of the cap); the distinct lines of tool results and assistant messages that mention an error, exception,
 * failure, fatal error, traceback or panic, newest first, naming the tool (≤ 15 %); the last assistant message with
 * text (≤ 20 %, head and tail kept). The result never exceeds `capTokens` tokens.
 *
 * @throws MemoryStoreError `invalid_argument` when `capTokens` is negative or not an integer.
 */
export function extractiveSummary(messages: readonly ChatMessageLike[], options: ExtractiveSummaryOptions = {}): string {
  const cap = options.capTokens ?? DEFAULT_EXTRACTIVE_SUMMARY_CAP;
  if (!Number.isInteger(cap) || cap < 0) {
    throw new MemoryStoreError('invalid_argument', `The summary cap must be a non-negative integer, got ${cap}`, {
      capTokens: cap,
    });
  }
  const counter = options.counter ?? defaultTokenCounter;
  const labels = loadPromptLabels('extractive-summary-labels', LABEL_KEYS);
  const elided = (tokens: number): string => fillLabel(labels.elided, { ELIDED_TOKENS: String(tokens) });
  const header = renderPrompt('extractive-summary-header', {}).trimEnd();

  const files = listWithin(filesTouched(messages), Math.floor(cap * FILES_SHARE), labels.files_omitted, counter);
  const errors = listWithin(errorLines(messages, counter), Math.floor(cap * ERRORS_SHARE), labels.errors_omitted, counter);
  const lastText = lastAssistantText(messages);
  const lastCap = Math.floor(cap * LAST_ASSISTANT_SHARE);
  const last = lastText === '' ? '' : (truncateHeadTail(lastText, lastCap, elided, counter)?.text ?? '');
  const assemble = (requests: string): string =>
    [
      header,
      `${labels.requests}\n${requests || labels.none}`,
      `${labels.files}\n${files || labels.none}`,
      `${labels.errors}\n${errors || labels.none}`,
      `${labels.last_assistant}\n${last || labels.none}`,
    ].join('\n\n');

  const requests = userRequests(messages);
  let budget = cap - counter.count(assemble(''));
  let text = assemble('');
  for (let plan = 0; plan < 4 && budget > 0; plan += 1) {
    text = assemble(requestsWithin(requests, budget, labels, elided, counter));
    const tokens = counter.count(text);
    if (tokens <= cap) break;
    budget -= tokens - cap;
  }
  return counter.count(text) <= cap ? text : readBudgeted(text, cap, counter);
}

/** Texts of the user's messages that are not blank, oldest → newest. */
function userRequests(messages: readonly ChatMessageLike[]): string[] {
  return messages
    .filter((message) => message.role === 'user')
    .map((message) => contentText(message.content))
    .filter((text) => text.trim() !== '');
}

/** The requests block within `budget`: newest first, each under a `[request i of n]` line. */
function requestsWithin(
  requests: readonly string[],
  budget: number,
  labels: Labels,
  elided: (tokens: number) => string,
  counter: TokenCount,
): string {
  const total = requests.length;
  const omittedLine = (count: number): string => fillLabel(labels.requests_omitted, { COUNT: String(count) });
  const attempt = (available: number): { blocks: string[]; omitted: number } => {
    const blocks: string[] = [];
    let remaining = available;
    for (let index = total - 1; index >= 0; index -= 1) {
      const label = fillLabel(labels.request_entry, { NUMBER: String(index + 1), TOTAL: String(total) });
      const block = `${label}\n${requests[index] ?? ''}`;
      const tokens = counter.count(block) + (blocks.length > 0 ? 1 : 0);
      if (tokens <= remaining) {
        blocks.push(block);
        remaining -= tokens;
        continue;
      }
      const room = remaining - counter.count(`${label}\n`) - 1;
      const cut = room >= MIN_PARTIAL_TOKENS ? truncateHeadTail(requests[index] ?? '', room, elided, counter) : null;
      if (cut !== null) blocks.push(`${label}\n${cut.text}`);
      return { blocks, omitted: index + (cut === null ? 1 : 0) };
    }
    return { blocks, omitted: 0 };
  };
  let result = attempt(budget);
  if (result.omitted > 0) {
    // Leave room for the "N older requests omitted" line, then try again.
    result = attempt(budget - counter.count(omittedLine(total)) - 1);
    if (result.omitted > 0) result.blocks.push(omittedLine(result.omitted));
  }
  return result.blocks.join('\n\n');
}

/** `- <path> (<tools>)` lines, the most recently touched file first. */
function filesTouched(messages: readonly ChatMessageLike[]): string[] {
  // `last`: position of the latest touch in call order (messages in order, calls and their paths in order).
  const touched = new Map<string, { tools: Set<string>; last: number }>();
  let sequence = 0;
  for (const message of messages) {
    for (const call of messageToolCalls(message)) {
      for (const path of toolCallPaths(call.args)) {
        const entry = touched.get(path) ?? { tools: new Set<string>(), last: 0 };
        if (call.name !== '') entry.tools.add(call.name);
        entry.last = (sequence += 1);
        touched.set(path, entry);
      }
    }
  }
  return [...touched.entries()]
    .sort(([, a], [, b]) => b.last - a.last)
    .map(([path, entry]) => (entry.tools.size > 0 ? `- ${path} (${[...entry.tools].sort().join(', ')})` : `- ${path}`));
}

/** Distinct error lines of tool results and assistant texts, newest first, as `- (<source>) <line>`. */
function errorLines(messages: readonly ChatMessageLike[], counter: TokenCount): string[] {
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    for (const call of messageToolCalls(message)) if (call.id !== undefined) toolNames.set(call.id, call.name);
  }
  const sources: { source: string; text: string }[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      sources.push({ source: toolNames.get(message.tool_call_id ?? '') || 'tool', text: contentText(message.content) });
    } else if (message.role === 'assistant') {
      sources.push({ source: 'assistant', text: contentText(message.content) });
    }
    for (const result of contentToolResults(message.content)) {
      sources.push({ source: toolNames.get(result.callId ?? '') || 'tool', text: result.text });
    }
  }
  const seen = new Set<string>();
  const lines: string[] = [];
  for (let index = sources.length - 1; index >= 0; index -= 1) {
    const { source, text } = sources[index] ?? { source: '', text: '' };
    const matching = text.split('\n').filter((line) => ERROR_LINE.test(line));
    for (let at = matching.length - 1; at >= 0; at -= 1) {
      const line = (matching[at] ?? '').trim();
      if (line === '' || seen.has(line)) continue;
      seen.add(line);
      const kept = prefixWithin(line, ERROR_LINE_TOKENS, counter);
      lines.push(`- (${source}) ${kept}${kept.length < line.length ? ' …' : ''}`);
    }
  }
  return lines;
}

/** The text of the last assistant message that has any, or ''. */
function lastAssistantText(messages: readonly ChatMessageLike[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role !== 'assistant') continue;
    const text = contentText(message.content).trim();
    if (text !== '') return text;
  }
  return '';
}

/** As many of `lines` as fit `budget` tokens, in order, plus an "N more" line when some were left out. */
function listWithin(lines: readonly string[], budget: number, omittedLabel: string, counter: TokenCount): string {
  const omittedLine = (count: number): string => fillLabel(omittedLabel, { COUNT: String(count) });
  const kept: string[] = [];
  let remaining = budget;
  for (const line of lines) {
    const tokens = counter.count(line) + 1;
    if (tokens > remaining) break;
    kept.push(line);
    remaining -= tokens;
  }
  if (kept.length < lines.length) {
    const reserve = counter.count(omittedLine(lines.length)) + 1;
    while (kept.length > 0 && remaining < reserve) remaining += counter.count(kept.pop() ?? '') + 1;
    if (remaining >= reserve) kept.push(omittedLine(lines.length - kept.length));
  }
  return kept.join('\n');
}
