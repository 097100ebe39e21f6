import { createHash } from 'node:crypto';
import { countTokens } from 'gpt-tokenizer';

/** Measured usage of one request's prompt. */
export interface PromptMeasure {
  readonly promptTokens: number;
  /** Tokens of the longest piece-wise prefix shared with an earlier request (before rounding). */
  readonly sharedTokens: number;
  /** `sharedTokens` rounded down to the block size, or 0 below the minimum. */
  readonly cachedTokens: number;
}

export interface PrefixCacheOptions {
  readonly blockTokens: number;
  readonly minCachedTokens: number;
}

// Special-token text such as "<|endoftext|>" may legitimately appear in a conversation: count it as plain text
// instead of letting gpt-tokenizer throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
// A memo bound: a long demo run must not grow the token memo without limit.
const MAX_MEMO = 20_000;

function sha256(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\u0000');
  return hash.digest('hex');
}

/**
 * A simulated provider prefix cache. A prompt is a list of pieces (model + tools, then each message serialized);
 * each request's chain of cumulative piece hashes is remembered, and a later request is credited with the tokens of
 * the longest chain prefix already seen — like OpenAI's automatic caching, rounded down to blocks and only above a
 * minimum. Token counts are real (o200k via gpt-tokenizer) and memoised per piece content hash.
 */
export class PrefixCache {
  readonly #options: PrefixCacheOptions;
  readonly #seen = new Set<string>();
  readonly #tokens = new Map<string, number>();

  constructor(options: PrefixCacheOptions) {
    this.#options = options;
  }

  /** Measures `pieces` against earlier requests, then remembers them. */
  observe(pieces: readonly string[]): PromptMeasure {
    let promptTokens = 0;
    let sharedTokens = 0;
    let matching = true;
    let chain = '';
    const chains: string[] = [];
    for (const piece of pieces) {
      const pieceHash = sha256(piece);
      const tokens = this.#countHashed(pieceHash, piece);
      chain = sha256(chain, pieceHash);
      chains.push(chain);
      promptTokens += tokens;
      if (matching && this.#seen.has(chain)) sharedTokens += tokens;
      else matching = false;
    }
    for (const c of chains) this.#seen.add(c);
    const { blockTokens, minCachedTokens } = this.#options;
    const rounded = blockTokens > 0 ? Math.floor(sharedTokens / blockTokens) * blockTokens : sharedTokens;
    return { promptTokens, sharedTokens, cachedTokens: rounded >= minCachedTokens ? rounded : 0 };
  }

  /** Real o200k token count of `text`, memoised by content hash. */
  count(text: string): number {
    return this.#countHashed(sha256(text), text);
  }

  #countHashed(key: string, text: string): number {
    const known = this.#tokens.get(key);
    if (known !== undefined) return known;
    const tokens = countTokens(text, PLAIN_TEXT);
    if (this.#tokens.size >= MAX_MEMO) this.#tokens.clear();
    this.#tokens.set(key, tokens);
    return tokens;
  }

  /** Forgets every remembered prefix (token memo kept: it is content-addressed). */
  clear(): void {
    this.#seen.clear();
  }
}
