import type { TokenCount } from './budgeted-read.ts';

/**
 * Token-budgeted cuts of verbatim text that never split a surrogate pair: the longest-found prefix or suffix within
 * a budget, and the head-and-tail truncation used for long user messages (head ≈ 60 %, tail ≈ 30 %
 * of the cap, a marker line between them).
 */

// Each cut is searched with at most this many token counts; the result is always a verified fit.
const MAX_PROBES = 12;
// Stop refining once the fitting and the failing lengths are this close (in UTF-16 units).
const CLOSE_ENOUGH = 8;
// A piece of this many characters per budget token bounds a search in a long text before the whole is counted (text
// averages about four characters per token; a piece that is not over the budget falls back to counting the whole).
const WINDOW_CHARS = 8;
// Share of the cap given to the head and to the tail; the rest is left for the marker line.
const HEAD_SHARE = 0.6;
const TAIL_SHARE = 0.3;
// Joining pieces can tokenise to a little more than the sum of their counts; re-plan at most this often.
const MAX_PLANS = 8;

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** `end`, moved back by one when `text.slice(0, end)` would end with the high half of a pair. */
function safeEnd(text: string, end: number): number {
  const at = Math.max(0, Math.min(end, text.length));
  return at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at)) ? at - 1 : at;
}

/** `start`, moved forward by one when `text.slice(start)` would begin with the low half of a pair. */
function safeStart(text: string, start: number): number {
  const at = Math.max(0, Math.min(start, text.length));
  return at > 0 && at < text.length && isLow(text.charCodeAt(at)) && isHigh(text.charCodeAt(at - 1)) ? at + 1 : at;
}

/**
 * A long piece of `text` taken from one end within `budget` tokens: `length` units are measured from the start
 * (`fromEnd` false) or the end. Searches between a verified fit and a verified miss, guided by proportion.
 */
function pieceWithin(text: string, budget: number, counter: TokenCount, fromEnd: boolean): string {
  const piece = (length: number): string =>
    fromEnd ? text.slice(safeStart(text, text.length - length)) : text.slice(0, safeEnd(text, length));
  if (budget <= 0 || text.length === 0) return '';
  let missLength = text.length;
  let measured: { length: number; tokens: number } | null = null;
  // A text far longer than the budget is not counted whole: a piece of `WINDOW_CHARS` characters per budget token
  // that is already over the budget bounds the search (a piece within it is the answer).
  const window = budget * WINDOW_CHARS;
  if (text.length > 2 * window) {
    const bound = piece(window);
    const tokens = counter.count(bound);
    if (tokens > budget) {
      missLength = bound.length;
      measured = { length: bound.length, tokens };
    }
  }
  if (measured === null) {
    const total = counter.count(text);
    if (total <= budget) return text;
    measured = { length: text.length, tokens: total };
  }
  let fit = '';
  let guess = Math.floor((measured.length * budget) / measured.tokens);
  for (let probe = 0; probe < MAX_PROBES && missLength - fit.length > CLOSE_ENOUGH; probe += 1) {
    const length = Math.max(fit.length + 1, Math.min(missLength - 1, guess));
    const candidate = piece(length);
    const tokens = candidate.length <= fit.length ? budget + 1 : counter.count(candidate);
    if (tokens <= budget && candidate.length > fit.length) fit = candidate;
    else missLength = Math.min(missLength, Math.max(length, candidate.length));
    // Next guess: proportional to what this probe measured, kept strictly between the fit and the miss.
    const scaled = tokens > 0 ? Math.floor((candidate.length * budget) / tokens) : missLength;
    guess = scaled > fit.length && scaled < missLength ? scaled : Math.floor((fit.length + missLength) / 2);
  }
  return fit;
}

/** The longest prefix of `text` found within `budget` tokens, never ending inside a surrogate pair. */
export function prefixWithin(text: string, budget: number, counter: TokenCount): string {
  return pieceWithin(text, budget, counter, false);
}

/** The longest suffix of `text` found within `budget` tokens, never starting inside a surrogate pair. */
export function suffixWithin(text: string, budget: number, counter: TokenCount): string {
  return pieceWithin(text, budget, counter, true);
}

/** Result of {@link truncateHeadTail}. */
export interface HeadTailCut {
  /** The text as it should be shown: `text` itself, or head, marker line and tail joined by newlines. */
  readonly text: string;
  /** Whether the middle was cut out. */
  readonly truncated: boolean;
  /** The verbatim prefix kept (the whole text when not truncated). */
  readonly head: string;
  /** The verbatim suffix kept ('' when not truncated). */
  readonly tail: string;
  /**
   * Tokens of the cut-out middle: the whole text's count less the head's and the tail's, within a token or two of the
   * middle's own count (0 when not truncated).
   */
  readonly elidedTokens: number;
}

/**
 * Fits `text` into `capTokens`: unchanged when it fits; otherwise a verbatim head (≈ 60 % of the cap), a marker line
 * built by `marker(elidedTokens)` and a verbatim tail (≈ 30 %), joined by newlines, the whole within the cap. No
 * surrogate pair is ever split. Returns null when not even the marker fits the cap.
 */
export function truncateHeadTail(
  text: string,
  capTokens: number,
  marker: (elidedTokens: number) => string,
  counter: TokenCount,
): HeadTailCut | null {
  const total = counter.count(text);
  if (total <= capTokens) return { text, truncated: false, head: text, tail: '', elidedTokens: 0 };
  let headBudget = Math.floor(capTokens * HEAD_SHARE);
  let tailBudget = Math.floor(capTokens * TAIL_SHARE);
  for (let plan = 0; plan < MAX_PLANS; plan += 1) {
    const head = prefixWithin(text, headBudget, counter);
    const tail = suffixWithin(text.slice(head.length), tailBudget, counter);
    // The middle is not counted again: the whole less the pieces kept (the seams shift the count by a token or two).
    const elidedTokens = Math.max(0, total - counter.count(head) - counter.count(tail));
    const pieces = [head, marker(elidedTokens), tail].filter((piece) => piece !== '');
    const output = pieces.join('\n');
    const tokens = counter.count(output);
    if (tokens <= capTokens) return { text: output, truncated: true, head, tail, elidedTokens };
    if (headBudget === 0 && tailBudget === 0) return null;
    // Take the excess from head and tail in proportion to their shares.
    const excess = tokens - capTokens;
    const fromHead = Math.ceil((excess * HEAD_SHARE) / (HEAD_SHARE + TAIL_SHARE));
    headBudget = Math.max(0, headBudget - fromHead);
    tailBudget = Math.max(0, tailBudget - (excess - fromHead));
  }
  return null;
}
