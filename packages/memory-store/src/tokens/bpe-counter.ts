import type { RankTable } from './rank-table.ts';
import { MergeQueue, indexOf, rankOf } from './merge-queue.ts';
import { encodeUtf8Into, isValidUtf8 } from './utf8.ts';

const NO_RANK = 0x7fffffff;
/** `prev` of a part merged into the one before it. */
const MERGED = -2;
/** Pieces up to this many bytes are merged by scanning, longer ones through a {@link MergeQueue}. */
const SCAN_MAX_BYTES = 64;
/** Merged pieces whose counts are kept; the map is emptied when full (a few hundred KiB at most). */
const MERGED_PIECES_KEPT = 4_096;
/** A buffer larger than this, grown for one huge piece, is dropped (all of them are) after the count. */
const KEPT_BUFFER_BYTES = 64 * 1024;

/**
 * Counts byte-pair-encoded tokens of text over a {@link RankTable}, giving the same numbers as gpt-tokenizer's
 * `countTokens` with special-token strings counted as plain text.
 *
 * The text is cut into pieces by the encoding's split pattern. A piece that is a token as a whole counts 1. Any other
 * piece starts as its UTF-8 bytes, one part per byte; the adjacent pair of parts whose joined bytes have the lowest
 * rank (the leftmost on a tie) is merged, again and again, until no adjacent pair is a token; the parts left are its
 * tokens.
 *
 * Two details follow gpt-tokenizer to the letter, since they change counts:
 * - a piece holding a lone surrogate is never taken whole: it is merged from its bytes, the surrogate as U+FFFD;
 * - while merging, a pair whose bytes are valid UTF-8 and start with a byte-order mark is ranked as the same bytes
 *   without the mark (gpt-tokenizer decodes the bytes to a string to look them up, and decoding drops a leading mark).
 *
 * One instance reuses its buffers, so it is not reentrant; counting is synchronous, so one per thread and encoding.
 */
export class BpeCounter {
  readonly #table: RankTable;
  readonly #split: RegExp;
  /** The same pattern, sticky: tells where the piece starting at a position ends without building a match. */
  readonly #sticky: RegExp;
  #bytes = new Uint8Array(1024);
  // Per part, keyed by the index of its first byte: the next part's first byte (the piece length after the last
  // part), the previous part's first byte (-1 before the first), and the rank of the part joined with the next one.
  #next = new Int32Array(256);
  #prev = new Int32Array(256);
  #ranks = new Int32Array(256);
  readonly #queue = new MergeQueue();
  // Counts of the last pieces that had to be merged (words that are not one token recur in a text).
  readonly #merged = new Map<string, number>();

  /** A counter over `table`, cutting text with `split` (a global, Unicode-aware pattern). */
  constructor(table: RankTable, split: RegExp) {
    this.#table = table;
    this.#split = split;
    this.#sticky = new RegExp(split.source, `${split.flags.replace('g', '')}y`);
  }

  /** Tokens in `text`. */
  count(text: string): number {
    // The pieces are the matches of the global pattern, left to right. Where a match starts right where the last one
    // ended (always, for the encodings' patterns, which leave no character out), the sticky pattern finds the same
    // match (the same alternatives tried in the same order at that position), and its test builds no match array nor
    // piece string; the global search finds the next match wherever else it starts.
    const sticky = this.#sticky;
    const split = this.#split;
    const length = text.length;
    let total = 0;
    let at = 0;
    while (at < length) {
      sticky.lastIndex = at;
      if (sticky.test(text)) {
        const end = sticky.lastIndex;
        total += this.#countPiece(text, at, end);
        at = end;
        continue;
      }
      split.lastIndex = at;
      const match = split.exec(text);
      if (match === null) break;
      at = match.index + match[0].length;
      total += this.#countPiece(text, match.index, at);
    }
    // A huge piece (a long run of whitespace is one) grew the buffers: let them go rather than keep them per thread.
    if (this.#bytes.length > KEPT_BUFFER_BYTES || this.#next.length * 4 > KEPT_BUFFER_BYTES) this.#resetBuffers();
    return total;
  }

  #resetBuffers(): void {
    this.#bytes = new Uint8Array(1024);
    this.#next = new Int32Array(256);
    this.#prev = new Int32Array(256);
    this.#ranks = new Int32Array(256);
    this.#queue.release();
  }

  /** Tokens of the piece `text[start, end)`; its string is made only when it has to be merged. */
  #countPiece(text: string, start: number, end: number): number {
    const chars = end - start;
    if (this.#bytes.length < chars * 3) this.#bytes = new Uint8Array(chars * 3 + 1024);
    const written = encodeUtf8Into(text, this.#bytes, start, end);
    const length = Math.abs(written);
    if (length === 1) return 1;
    if (written > 0 && this.#table.rankOf(this.#bytes, 0, length) !== -1) return 1;
    const piece = text.slice(start, end);
    const known = this.#merged.get(piece);
    if (known !== undefined) return known;
    const parts = this.#merge(length);
    if (this.#merged.size >= MERGED_PIECES_KEPT) this.#merged.clear();
    this.#merged.set(piece, parts);
    return parts;
  }

  /** Number of parts left after merging the `length` bytes in the buffer. */
  #merge(length: number): number {
    if (this.#next.length <= length) {
      const size = length * 2;
      this.#next = new Int32Array(size);
      this.#prev = new Int32Array(size);
      this.#ranks = new Int32Array(size);
    }
    const next = this.#next;
    const prev = this.#prev;
    const ranks = this.#ranks;
    for (let i = 0; i < length; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      ranks[i] = i + 2 <= length ? this.#pairRank(i, i + 2) : NO_RANK;
    }
    return length <= SCAN_MAX_BYTES ? this.#mergeByScan(length) : this.#mergeByQueue(length);
  }

  /** Merging that finds the lowest pair by walking all parts: the fastest way for the short pieces most text has. */
  #mergeByScan(length: number): number {
    const next = this.#next;
    const ranks = this.#ranks;
    let parts = length;
    for (;;) {
      let lowest = NO_RANK;
      let at = -1;
      for (let i = 0; i < length; i = next[i] ?? length) {
        const rank = ranks[i] ?? NO_RANK;
        if (rank < lowest) {
          lowest = rank;
          at = i;
        }
      }
      if (at === -1) return parts;
      this.#join(at, length);
      parts--;
    }
  }

  /**
   * The same merging in O(n log n) for long pieces (a long run of whitespace is one piece): every pair rank goes into
   * a queue, and a candidate taken out is skipped when its first part was merged away or its rank changed since.
   */
  #mergeByQueue(length: number): number {
    const prev = this.#prev;
    const ranks = this.#ranks;
    const queue = this.#queue;
    queue.clear();
    for (let i = 0; i < length; i++) {
      const rank = ranks[i] ?? NO_RANK;
      if (rank !== NO_RANK) queue.push(rank, i);
    }
    let parts = length;
    while (!queue.empty) {
      const key = queue.pop();
      const at = indexOf(key);
      if (prev[at] === MERGED || ranks[at] !== rankOf(key)) continue;
      const before = this.#join(at, length);
      parts--;
      const rank = ranks[at] ?? NO_RANK;
      if (rank !== NO_RANK) queue.push(rank, at);
      const rankBefore = before >= 0 ? (ranks[before] ?? NO_RANK) : NO_RANK;
      if (rankBefore !== NO_RANK) queue.push(rankBefore, before);
    }
    return parts;
  }

  /**
   * Joins the part at `at` with the next one and re-ranks the pairs the new part belongs to; returns the first byte of
   * the part before it (-1 when it is the first).
   */
  #join(at: number, length: number): number {
    const next = this.#next;
    const prev = this.#prev;
    const ranks = this.#ranks;
    const joined = next[at] ?? length;
    const after = next[joined] ?? length;
    next[at] = after;
    prev[joined] = MERGED;
    if (after < length) prev[after] = at;
    ranks[at] = after < length ? this.#pairRank(at, next[after] ?? length) : NO_RANK;
    const before = prev[at] ?? -1;
    if (before >= 0) ranks[before] = this.#pairRank(before, after);
    return before;
  }

  /** The rank of the buffer's bytes `[start, end)` as gpt-tokenizer ranks a pair while merging. */
  #pairRank(start: number, end: number): number {
    const bytes = this.#bytes;
    let from = start;
    if (end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf && isValidUtf8(bytes, start, end)) {
      from = start + 3;
      if (from === end) return NO_RANK;
    }
    const rank = this.#table.rankOf(bytes, from, end);
    return rank === -1 ? NO_RANK : rank;
  }
}
