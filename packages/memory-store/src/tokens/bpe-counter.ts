import type { RankTable } from './rank-table.ts';
import { encodeUtf8Into, isValidUtf8 } from './utf8.ts';

const NO_RANK = 0x7fffffff;

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
  #bytes = new Uint8Array(1024);
  // Per part, keyed by the index of its first byte: the next part's first byte (the piece length after the last
  // part), the previous part's first byte (-1 before the first), and the rank of the part joined with the next one.
  #next = new Int32Array(256);
  #prev = new Int32Array(256);
  #ranks = new Int32Array(256);

  /** A counter over `table`, cutting text with `split` (a global, Unicode-aware pattern). */
  constructor(table: RankTable, split: RegExp) {
    this.#table = table;
    this.#split = split;
  }

  /** Tokens in `text`. */
  count(text: string): number {
    const split = this.#split;
    split.lastIndex = 0;
    let total = 0;
    for (let match = split.exec(text); match !== null; match = split.exec(text)) total += this.#countPiece(match[0]);
    return total;
  }

  #countPiece(piece: string): number {
    if (this.#bytes.length < piece.length * 3) this.#bytes = new Uint8Array(piece.length * 3 + 1024);
    const written = encodeUtf8Into(piece, this.#bytes);
    const length = Math.abs(written);
    if (length === 1) return 1;
    if (written > 0 && this.#table.rankOf(this.#bytes, 0, length) !== -1) return 1;
    return this.#merge(length);
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
      // Join the part at `at` with the next one, then re-rank the pairs the new part belongs to.
      const after = next[next[at] ?? length] ?? length;
      next[at] = after;
      if (after < length) prev[after] = at;
      parts--;
      ranks[at] = after < length ? this.#pairRank(at, next[after] ?? length) : NO_RANK;
      const before = prev[at] ?? -1;
      if (before >= 0) ranks[before] = this.#pairRank(before, after);
    }
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
