import { isIndexLine } from '../validator/index-lines.ts';
import { MemoryStoreError } from '../memory-errors.ts';
import { defaultTokenCounter } from './token-counter.ts';

/**
 * Budgeted readers used when memory files are injected into a rebuilt context: the
 * output of both never exceeds the cap in real tokens, and a cut never splits a surrogate pair.
 */

/** Anything that counts tokens; {@link TokenCounter} (the default, o200k_base, cached) is one. */
export interface TokenCount {
  count(text: string): number;
}

/** Last line of a plainly truncated read. */
export const TRUNCATION_MARKER = '[… truncated to fit the token budget]';
/** Line closing a section whose body was cut by {@link readSectionAware}. */
export const SECTION_CUT_MARKER = '[… section truncated to fit the token budget]';

// Reference `budgeted-read.ts`: aim a little short of the proportional length, then back to a line end.
const CUT_FACTOR = 0.95;
// A partial section body is worth its header only with some room.
const MIN_PARTIAL_TOKENS = 50;
// Joining pieces can tokenise to a little more than the sum of their counts; re-plan at most this often.
const MAX_PLANS = 8;

/**
 * Returns `text` unchanged when it fits `capTokens`; otherwise a prefix cut at about 0.95 of the proportional
 * length, back to the last newline (mid-line only when the prefix holds no newline at all), followed by the
 * {@link TRUNCATION_MARKER} line. The result never exceeds `capTokens` tokens; a cap too small for even the
 * marker gives the empty string.
 *
 * @throws MemoryStoreError `invalid_argument` when `capTokens` is negative or not an integer.
 */
export function readBudgeted(text: string, capTokens: number, counter: TokenCount = defaultTokenCounter): string {
  assertCap(capTokens);
  if (counter.count(text) <= capTokens) return text;
  const marker = `${TRUNCATION_MARKER}\n`;
  let budget = capTokens - counter.count(marker);
  for (let plan = 0; plan < MAX_PLANS && budget >= 0; plan += 1) {
    const kept = cutToFit(text, budget, counter);
    const output = kept === '' || kept.endsWith('\n') ? kept + marker : `${kept}\n${marker}`;
    const tokens = counter.count(output);
    if (tokens <= capTokens) return output;
    budget -= tokens - capTokens;
  }
  return '';
}

/**
 * Section-aware read for checkpoint.md and MEMORY.md: returns `text` unchanged when it fits; otherwise keeps the
 * skeleton — the `# ` title, every `## ` header, every italic line and every index line (`- See <file>.md (N …`) —
 * and fills the rest (preamble, then section bodies in order) while tokens remain. A body that does not fit whole
 * is kept in part only when more than 50 tokens remain, and every cut section ends with a
 * {@link SECTION_CUT_MARKER} line. Runs of blank lines are collapsed. When even the skeleton exceeds the cap, the
 * skeleton is cut plainly ({@link readBudgeted}). The result never exceeds `capTokens` tokens.
 *
 * @throws MemoryStoreError `invalid_argument` when `capTokens` is negative or not an integer.
 */
export function readSectionAware(text: string, capTokens: number, counter: TokenCount = defaultTokenCounter): string {
  assertCap(capTokens);
  if (counter.count(text) <= capTokens) return text;
  const blocks = splitBlocks(text);
  let budget = capTokens;
  for (let plan = 0; plan < MAX_PLANS; plan += 1) {
    const output = assemble(blocks, budget, counter);
    if (output === null) break;
    const tokens = counter.count(output);
    if (tokens <= capTokens) return output;
    budget -= tokens - capTokens;
  }
  const skeleton = blocks.flatMap((block) => block.filter((line) => line.skeleton).map((line) => line.text));
  return readBudgeted(collapseBlankRuns(skeleton).join('\n'), capTokens, counter);
}

interface Line {
  readonly text: string;
  /** Always kept: title, header, italic, index or blank line. */
  readonly skeleton: boolean;
}

/** Splits into blocks: the preamble (possibly empty), then one block per `## ` section (fences respected). */
function splitBlocks(text: string): Line[][] {
  const raw = text.split('\n');
  if (raw.at(-1) === '') raw.pop();
  const blocks: Line[][] = [[]];
  let fence: string | null = null;
  let titleSeen = false;
  for (const lineText of raw) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(lineText)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    }
    const header = fence === null && marker === undefined && lineText.startsWith('## ');
    if (header) blocks.push([]);
    const trimmed = lineText.trim();
    const title = !titleSeen && blocks.length === 1 && /^# /.test(trimmed);
    if (title || header) titleSeen = true;
    const skeleton = header || title || trimmed === '' || isItalic(trimmed) || isIndexLine(trimmed);
    blocks.at(-1)?.push({ text: lineText, skeleton });
  }
  return blocks;
}

function isItalic(trimmed: string): boolean {
  return /^_[^_\s].*_$/.test(trimmed) || /^\*[^*\s].*\*$/.test(trimmed);
}

/** One plan: the skeleton plus as much body as `budget` allows; null when the skeleton alone does not fit. */
function assemble(blocks: readonly Line[][], budget: number, counter: TokenCount): string | null {
  const skeleton = blocks.flatMap((block) => block.filter((line) => line.skeleton).map((line) => line.text));
  let remaining = budget - counter.count(collapseBlankRuns(skeleton).join('\n'));
  if (remaining < 0) return null;
  const markerCost = counter.count(`${SECTION_CUT_MARKER}\n`);
  const output: string[] = [];
  for (const block of blocks) {
    const content = block.filter((line) => !line.skeleton).map((line) => line.text);
    let kept = content;
    let cut = false;
    if (content.length > 0) {
      const cost = counter.count(`${content.join('\n')}\n`);
      if (cost <= remaining) {
        remaining -= cost;
      } else {
        cut = true;
        remaining -= markerCost;
        kept = [];
        if (remaining > MIN_PARTIAL_TOKENS) {
          const partial = cutToFit(`${content.join('\n')}\n`, remaining, counter);
          remaining -= counter.count(partial);
          kept = partial === '' ? [] : partial.replace(/\n$/, '').split('\n');
        }
      }
    }
    output.push(...mergeBlock(block, kept, cut));
  }
  return `${collapseBlankRuns(output).join('\n')}\n`;
}

/** The block's lines in original order: every skeleton line, the first kept content lines, then the cut marker. */
function mergeBlock(block: readonly Line[], kept: readonly string[], cut: boolean): string[] {
  const lines: string[] = [];
  let next = 0;
  for (const line of block) {
    if (line.skeleton) lines.push(line.text);
    else if (next < kept.length) lines.push(kept[next++] ?? '');
  }
  if (cut) {
    let at = lines.length;
    while (at > 0 && (lines[at - 1] ?? '').trim() === '') at -= 1;
    lines.splice(at, 0, SECTION_CUT_MARKER);
  }
  return lines;
}

function collapseBlankRuns(lines: readonly string[]): string[] {
  return lines.filter((line, index) => line.trim() !== '' || index === 0 || (lines[index - 1] ?? '').trim() !== '');
}

/**
 * A long prefix of `text` within `budget` tokens: aim at 0.95 of the proportional length, back to the last newline
 * (keeping it), shrink until it fits. Only when the prefix holds no newline at all is it cut mid-line.
 */
function cutToFit(text: string, budget: number, counter: TokenCount): string {
  if (budget <= 0) return '';
  const total = counter.count(text);
  if (total <= budget) return text;
  let length = Math.floor(((text.length * budget) / total) * CUT_FACTOR);
  while (length > 0) {
    let cut = text.slice(0, safeBoundary(text, length));
    const newline = cut.lastIndexOf('\n');
    if (newline >= 0) cut = cut.slice(0, newline + 1);
    const tokens = counter.count(cut);
    if (tokens <= budget) return cut;
    length = Math.min(cut.length - 1, Math.floor(((cut.length * budget) / tokens) * CUT_FACTOR));
  }
  return '';
}

/** `index`, moved back by one when it would fall between the two halves of a surrogate pair. */
function safeBoundary(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return Math.max(0, Math.min(index, text.length));
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff ? index - 1 : index;
}

function assertCap(capTokens: number): void {
  if (!Number.isInteger(capTokens) || capTokens < 0) {
    throw new MemoryStoreError('invalid_argument', `The token cap must be a non-negative integer, got ${capTokens}`, {
      capTokens,
    });
  }
}
