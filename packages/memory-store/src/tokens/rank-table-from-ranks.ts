import { MAX_TOKEN_BYTES, RankTable } from './rank-table.ts';
import { isValidUtf8 } from './utf8.ts';

/**
 * The rank table of gpt-tokenizer's rank data (`gpt-tokenizer/bpeRanks/<encoding>`: index = rank, value = the token
 * as a string, or as its bytes when they are not text), holding exactly the tokens gpt-tokenizer can find.
 *
 * gpt-tokenizer looks a byte sequence up by its decoded string whenever the bytes are valid UTF-8, and among the
 * byte-valued entries only otherwise. A byte-valued entry that is valid UTF-8 (the few tokens that start with a
 * byte-order mark, which decoding would drop) is therefore never found, and is left out here as a hole.
 */
export function rankTableFromRanks(ranks: readonly (string | readonly number[] | undefined)[]): RankTable {
  const encoder = new TextEncoder();
  const lengths = new Uint8Array(ranks.length);
  const tokens: Uint8Array[] = [];
  let total = 0;
  for (let rank = 0; rank < ranks.length; rank++) {
    const value = ranks[rank];
    if (value === undefined) continue;
    const bytes = typeof value === 'string' ? encoder.encode(value) : Uint8Array.from(value);
    if (typeof value === 'string' && !isWellFormed(value)) throw new Error(`rank ${rank} is not well-formed text`);
    if (typeof value !== 'string' && isValidUtf8(bytes, 0, bytes.length)) continue;
    if (bytes.length === 0 || bytes.length > MAX_TOKEN_BYTES) throw new Error(`rank ${rank} has ${bytes.length} bytes`);
    lengths[rank] = bytes.length;
    tokens.push(bytes);
    total += bytes.length;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const bytes of tokens) {
    all.set(bytes, at);
    at += bytes.length;
  }
  return new RankTable(lengths, all);
}

/** Whether `text` has no lone surrogate (a lone one would not survive encoding to UTF-8). */
function isWellFormed(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}
