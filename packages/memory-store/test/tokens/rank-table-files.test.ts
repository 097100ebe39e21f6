import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rankTableFromRanks } from '../../src/tokens/rank-table-from-ranks.ts';
import { TOKEN_ENCODINGS } from '../../src/tokens/token-counter.ts';
import { gptTokenizerRanks } from './gpt-tokenizer-ranks.ts';

describe.each(TOKEN_ENCODINGS)('ranks/%s.bin', (encoding) => {
  it("is the table of gpt-tokenizer's installed rank data (rewrite it with scripts/write-rank-tables.ts)", { timeout: 60_000 }, async () => {
    const ranks = await gptTokenizerRanks(encoding);
    const table = rankTableFromRanks(ranks);
    const file = readFileSync(new URL(`../../ranks/${encoding}.bin`, import.meta.url));
    expect(Buffer.compare(file, table.toBinary())).toBe(0);

    // Every token is in the table at its rank, except those gpt-tokenizer never finds: kept as bytes, yet valid UTF-8.
    const left: number[] = [];
    const misplaced: number[] = [];
    for (let rank = 0; rank < ranks.length; rank++) {
      const value = ranks[rank];
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Uint8Array.from(value ?? []);
      const reachable = typeof value === 'string' || !decodes(bytes);
      if (table.rankOf(bytes, 0, bytes.length) !== (reachable ? rank : -1)) misplaced.push(rank);
      if (!reachable) left.push(rank);
    }
    expect(misplaced).toEqual([]);
    // Those are the tokens that start with a byte-order mark, which decoding drops.
    expect(left.length).toBeGreaterThan(0);
    for (const rank of left) expect([...Uint8Array.from(ranks[rank] as number[]).subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  });
});

const fatal = new TextDecoder('utf-8', { fatal: true });

function decodes(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
