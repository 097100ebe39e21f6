/**
 * Writes `ranks/<encoding>.bin`, the compact rank tables the token counter reads, from gpt-tokenizer's rank data.
 * Run after upgrading gpt-tokenizer: `npx tsx --conditions=@baton/source packages/memory-store/scripts/write-rank-tables.ts`
 * (test/tokens/rank-table-files.test.ts fails while a file differs from what this would write).
 */
import { writeFileSync } from 'node:fs';
import { gptTokenizerRanks } from '../test/tokens/gpt-tokenizer-ranks.ts';
import { rankTableFromRanks } from '../src/tokens/rank-table-from-ranks.ts';
import { TOKEN_ENCODINGS } from '../src/tokens/token-counter.ts';

for (const encoding of TOKEN_ENCODINGS) {
  const binary = rankTableFromRanks(await gptTokenizerRanks(encoding)).toBinary();
  const file = new URL(`../ranks/${encoding}.bin`, import.meta.url);
  writeFileSync(file, binary);
  console.log(`${encoding}: ${binary.length} bytes → ${file.pathname}`);
}
