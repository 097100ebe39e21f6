import { readFileSync } from 'node:fs';
import { RankTable } from './rank-table.ts';
import type { TokenEncoding } from './token-counter.ts';

/**
 * The rank table of `encoding`, read from the package's `ranks/<encoding>.bin` (written from gpt-tokenizer's rank data
 * by `scripts/write-rank-tables.ts`). Every thread that counts tokens reads its own copy: about 1.6 MiB of file and
 * 3 MiB of offsets and hash slots for o200k_base, in a few milliseconds.
 */
export function loadRankTable(encoding: TokenEncoding): RankTable {
  // Two levels up from src/tokens/ (sources) and from dist/tokens/ (build) alike: the package directory.
  return RankTable.fromBinary(readFileSync(new URL(`../../ranks/${encoding}.bin`, import.meta.url)));
}
