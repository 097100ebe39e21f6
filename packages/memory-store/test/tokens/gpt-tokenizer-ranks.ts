import type { TokenEncoding } from '../../src/tokens/token-counter.ts';

/** gpt-tokenizer's rank data of `encoding`: index = rank, value = the token as a string or as its bytes. */
export async function gptTokenizerRanks(encoding: TokenEncoding): Promise<readonly (string | readonly number[])[]> {
  const module = encoding === 'cl100k_base' ? await import('gpt-tokenizer/bpeRanks/cl100k_base') : await import('gpt-tokenizer/bpeRanks/o200k_base');
  return module.default;
}
