import { hash } from 'node:crypto';
import { BpeCounter } from './bpe-counter.ts';
import { loadRankTable } from './load-rank-table.ts';
import { tokenSplitPattern } from './token-split-pattern.ts';

/**
 * Real token counts for memory budgets: o200k_base by default, counted by {@link BpeCounter} over a compact
 * rank table built from gpt-tokenizer's rank data (the same counts as gpt-tokenizer's `countTokens`, in a few MiB per
 * thread instead of about 65 MiB), and a bounded LRU cache so that re-validating a file whose sections did not change
 * costs a map lookup per section instead of a tokenisation.
 */

/** Encodings a {@link TokenCounter} can use. */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

/** The encodings {@link TokenCounter} accepts, for configuration schemas. */
export const TOKEN_ENCODINGS: readonly TokenEncoding[] = ['o200k_base', 'cl100k_base'];

/** Options of a {@link TokenCounter}. */
export interface TokenCounterOptions {
  /** Encoding of the counted tokens. Default `'o200k_base'` (GPT-4o and later). */
  readonly encoding?: TokenEncoding;
  /** Most counts kept in the cache; the least recently used is dropped first. Default 4 096. */
  readonly maxEntries?: number;
  /**
   * Most characters of text kept as cache keys, summed over the entries keyed by their text. Default 4 Mi
   * (about 8 MiB of strings at worst).
   */
  readonly maxKeyChars?: number;
}

/** Cache figures of a {@link TokenCounter}, for tests and benchmarks. */
export interface TokenCounterStats {
  readonly hits: number;
  readonly misses: number;
  readonly entries: number;
}

type CountFn = (text: string) => number;

// Texts up to this length are their own cache key; longer ones are keyed by a SHA-1 digest. Measured on this
// machine (Node 20): a Map lookup keyed by the text beats hashing it at every size, because V8 hashes a string once
// and compares only on a hash match. Past 16 383 characters V8 stops hashing the content (the length stands in for
// the hash), so equal-length long texts would all collide and be compared character by character; the digest
// keeps those lookups O(1) and keeps megabyte-sized texts out of memory. Either way a hit is well over 10x cheaper
// than a count (a 4 KiB section: ~40 µs lookup vs ~400 µs count; 1 MiB: ~2 ms vs ~130 ms).
const MAX_TEXT_KEY_CHARS = 16_383;

// An encoding's rank table is read on first use, not at import: most processes that import the memory store (a CLI
// command, a worker that never validates) never count a token.
const loaded = new Map<TokenEncoding, CountFn>();

function loadCount(encoding: TokenEncoding): CountFn {
  let count = loaded.get(encoding);
  if (count === undefined) {
    const counter = new BpeCounter(loadRankTable(encoding), tokenSplitPattern(encoding));
    count = (text) => counter.count(text);
    loaded.set(encoding, count);
  }
  return count;
}

/**
 * Counts tokens of text (special-token strings such as `<|endoftext|>` count as the plain text they are: a user quote
 * in a checkpoint may well contain one), caching every count by content. Counting is synchronous and
 * deterministic: the same text always gives the same number, cached or not.
 */
export class TokenCounter {
  /** The encoding tokens are counted in. */
  readonly encoding: TokenEncoding;
  readonly #maxEntries: number;
  readonly #maxKeyChars: number;
  // One map, kept in least-recently-used-first order (a hit re-inserts its key). Short texts are keyed by
  // themselves, long ones by `\u0000<length>:<sha1>`; a short text could only collide with a digest key by being
  // that exact NUL-prefixed string.
  readonly #cache = new Map<string, number>();
  #keyChars = 0;
  #hits = 0;
  #misses = 0;
  #count: CountFn | undefined;

  constructor(options: TokenCounterOptions = {}) {
    this.encoding = options.encoding ?? 'o200k_base';
    this.#maxEntries = Math.max(1, options.maxEntries ?? 4_096);
    this.#maxKeyChars = Math.max(0, options.maxKeyChars ?? 4 * 1024 * 1024);
  }

  /** Number of tokens in `text` (0 for the empty string). Loads the encoding on first call. */
  count(text: string): number {
    if (text.length === 0) return 0;
    const key = text.length <= MAX_TEXT_KEY_CHARS ? text : `\u0000${text.length}:${hash('sha1', text, 'base64')}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) {
      this.#hits += 1;
      // Refresh recency: Map keeps insertion order, so the first key is always the least recently used.
      this.#cache.delete(key);
      this.#cache.set(key, cached);
      return cached;
    }
    this.#misses += 1;
    this.#count ??= loadCount(this.encoding);
    const tokens = countOrEstimate(this.#count, text);
    this.#remember(key, tokens);
    return tokens;
  }

  /** Hits, misses and current size of the cache. */
  stats(): TokenCounterStats {
    return { hits: this.#hits, misses: this.#misses, entries: this.#cache.size };
  }

  /** Empties the cache and resets the statistics (the loaded encoding is kept). */
  clear(): void {
    this.#cache.clear();
    this.#keyChars = 0;
    this.#hits = 0;
    this.#misses = 0;
  }

  #remember(key: string, tokens: number): void {
    const keyChars = key.length;
    if (keyChars > this.#maxKeyChars) return;
    this.#cache.set(key, tokens);
    this.#keyChars += keyChars;
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= this.#maxEntries && this.#keyChars <= this.#maxKeyChars) break;
      this.#cache.delete(oldest);
      this.#keyChars -= oldest.length;
    }
  }
}

/**
 * The counter's count, or — should it ever throw on some input — an estimate of one token per four UTF-8 bytes, so
 * that counting never fails whatever text an agent sends.
 */
function countOrEstimate(count: CountFn, text: string): number {
  try {
    return hasLongRun(text) ? countInPieces(count, text) : count(text);
  } catch {
    return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
  }
}

/** A run of non-space characters this long is one pre-token, which byte-pair merging handles in quadratic time. */
const LONG_RUN = 1_000;
const LONG_RUNS = new RegExp(`\\S{${LONG_RUN},}`, 'g');

/** Whether the code unit is one `\s` matches (JavaScript's white space and line terminators; none is astral). */
function isSpace(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/**
 * Whether `text` holds `LONG_RUN` non-space characters in a row (what `/\S{1000}/` matches), looking at few of its
 * characters: a run that ends at or after `end` covers `end`, so `end` and the characters before it are read back to
 * the nearest space, and the next run can end no sooner than `LONG_RUN` after that space. Every message is probed
 * before it is counted; the regular expression read every character (about 20 µs for 1.4 KB, this well under 1 µs).
 */
export function hasLongRun(text: string): boolean {
  let end = LONG_RUN - 1;
  while (end < text.length) {
    const stop = end - LONG_RUN;
    let at = end;
    while (at > stop && !isSpace(text.charCodeAt(at))) at--;
    if (at === stop) return true;
    end = at + LONG_RUN;
  }
  return false;
}
/** Pieces a long run is counted in: close to its real count, in linear time. */
const RUN_PIECE = 500;

/**
 * Counts text holding very long runs without spaces (a minified file, base64, a 60 KB line of one character) piece by
 * piece: the text around the runs as it is, each run in `RUN_PIECE`-character pieces. Counting such a run whole takes
 * seconds; pieces may differ from the whole count by a token per piece, which is nothing next to the run's size.
 */
function countInPieces(count: CountFn, text: string): number {
  let total = 0;
  let last = 0;
  for (const match of text.matchAll(LONG_RUNS)) {
    const at = match.index;
    if (at > last) total += count(text.slice(last, at));
    for (let i = 0; i < match[0].length; i += RUN_PIECE) total += count(match[0].slice(i, i + RUN_PIECE));
    last = at + match[0].length;
  }
  if (last < text.length) total += count(text.slice(last));
  return total;
}

/**
 * Tokens of `text` without keeping it in a cache: for texts counted once, such as the messages an agent appends.
 * Never throws (see `countOrEstimate`).
 */
export function countTokensOnce(text: string, encoding: TokenEncoding = 'o200k_base'): number {
  return text.length === 0 ? 0 : countOrEstimate(loadCount(encoding), text);
}

/** The process-wide counter: o200k_base, default cache bounds. */
export const defaultTokenCounter: TokenCounter = new TokenCounter();
