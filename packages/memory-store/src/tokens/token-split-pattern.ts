import type { TokenEncoding } from './token-counter.ts';

/**
 * The pre-tokenising pattern of each encoding: text is cut into the pieces this pattern matches, left to right, and
 * each piece is byte-pair encoded on its own. The patterns are part of the encodings' definitions (the same ones
 * gpt-tokenizer uses): a word with its leading space or punctuation mark and its English contraction suffix, up to
 * three digits, a run of punctuation with the line breaks (o200k_base: and slashes) after it, and whitespace, whose
 * last space before a word is left to that word.
 */

const CONTRACTION = "'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])";

const O200K_BASE = [
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:${CONTRACTION})?`,
  `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:${CONTRACTION})?`,
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
  '\\s*[\\r\\n]+',
  '\\s+(?!\\S)',
  '\\s+',
].join('|');

const CL100K_BASE = [
  CONTRACTION,
  '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+',
  '\\p{N}{1,3}',
  ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*',
  '\\s+$',
  '\\s*[\\r\\n]',
  '\\s+(?!\\S)',
  '\\s',
].join('|');

/** A new global, Unicode-aware regular expression that matches the pieces of `encoding` one after another. */
export function tokenSplitPattern(encoding: TokenEncoding): RegExp {
  return new RegExp(encoding === 'cl100k_base' ? CL100K_BASE : O200K_BASE, 'gu');
}
