import fc from 'fast-check';
import { countTokens as cl100kCount } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200kCount } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { BpeCounter } from '../../src/tokens/bpe-counter.ts';
import { loadRankTable } from '../../src/tokens/load-rank-table.ts';
import { TOKEN_ENCODINGS, TokenCounter, countTokensOnce, type TokenEncoding } from '../../src/tokens/token-counter.ts';
import { tokenSplitPattern } from '../../src/tokens/token-split-pattern.ts';
import { hostileTexts } from './hostile-texts.ts';
import { longPieceTexts, randomTexts } from './random-texts.ts';
import { repoFixtureTexts, type NamedText } from './repo-fixture-texts.ts';

/**
 * The compact counter against the reference it replaces: gpt-tokenizer's `countTokens`, special-token strings counted
 * as plain text. Any text counted differently fails, and is named in the failure.
 */

const plain = { disallowedSpecial: new Set<string>() };
const REFERENCE: Record<TokenEncoding, (text: string) => number> = {
  o200k_base: (text) => o200kCount(text, plain),
  cl100k_base: (text) => cl100kCount(text, plain),
};

const counters = new Map<TokenEncoding, BpeCounter>();
function counterOf(encoding: TokenEncoding): BpeCounter {
  let counter = counters.get(encoding);
  if (counter === undefined) {
    counter = new BpeCounter(loadRankTable(encoding), tokenSplitPattern(encoding));
    counters.set(encoding, counter);
  }
  return counter;
}

/** One line per text counted differently from gpt-tokenizer. */
function mismatches(encoding: TokenEncoding, texts: readonly NamedText[]): string[] {
  const counter = counterOf(encoding);
  const out: string[] = [];
  for (const { name, text } of texts) {
    const expected = REFERENCE[encoding](text);
    const actual = counter.count(text);
    if (actual !== expected) out.push(`${name}: ${actual} tokens, gpt-tokenizer ${expected}, in ${JSON.stringify(text.slice(0, 160))}`);
  }
  return out;
}

/** Every token of the vocabulary as text (bytes that are not UTF-8 decoded to U+FFFD), in rank order. */
function vocabularyTexts(encoding: TokenEncoding): NamedText[] {
  const table = loadRankTable(encoding);
  const decoder = new TextDecoder();
  const texts: NamedText[] = [];
  for (let rank = 0; rank < table.size; rank++) {
    const bytes = table.tokenBytes(rank);
    if (bytes.length > 0) texts.push({ name: `token ${rank}`, text: decoder.decode(bytes) });
  }
  return texts;
}

/** Runs of 2 to 12 tokens picked at random (seeded), glued together: merges across the tokens' boundaries. */
function tokenRuns(encoding: TokenEncoding, count: number): NamedText[] {
  const vocabulary = vocabularyTexts(encoding);
  let x = 2_024;
  const next = (): number => (x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0) >>> 8;
  return Array.from({ length: count }, (_, i) => ({
    name: `token run ${i}`,
    text: Array.from({ length: 2 + (next() % 11) }, () => vocabulary[next() % vocabulary.length]?.text ?? '').join(''),
  }));
}

describe.each(TOKEN_ENCODINGS)('BpeCounter (%s) against gpt-tokenizer', (encoding) => {
  it('counts every fixture text of the repository alike', { timeout: 120_000 }, () => {
    const texts = repoFixtureTexts();
    expect(texts.length).toBeGreaterThan(5_000);
    expect(texts.reduce((sum, t) => sum + t.text.length, 0)).toBeGreaterThan(1_000_000);
    expect(mismatches(encoding, texts)).toEqual([]);
  });

  it('counts hostile content alike', { timeout: 60_000 }, () => {
    expect(mismatches(encoding, hostileTexts())).toEqual([]);
  });

  it('counts 3 100 seeded random texts alike', { timeout: 120_000 }, () => {
    const texts = [...randomTexts(1, 2_000, 60), ...randomTexts(2, 1_000, 400), ...randomTexts(3, 100, 2_000)];
    expect(mismatches(encoding, texts)).toEqual([]);
  });

  it('counts 400 long pieces of one kind each alike', { timeout: 60_000 }, () => {
    expect(mismatches(encoding, longPieceTexts(4, 400))).toEqual([]);
  });

  it('counts every token of the vocabulary alone, and glued runs of tokens, alike', { timeout: 120_000 }, () => {
    const texts = [...vocabularyTexts(encoding), ...tokenRuns(encoding, 8_000)];
    expect(texts.length).toBeGreaterThan(100_000);
    expect(mismatches(encoding, texts)).toEqual([]);
  });

  it('counts arbitrary strings alike (property)', { timeout: 60_000 }, () => {
    const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 200 }), fc.string({ unit: 'grapheme-composite', maxLength: 200 }));
    fc.assert(
      fc.property(text, (t) => counterOf(encoding).count(t) === REFERENCE[encoding](t)),
      { numRuns: 2_000 },
    );
  });
});

describe('long runs without spaces', () => {
  it.each(TOKEN_ENCODINGS)('are counted in 500-character pieces, each as gpt-tokenizer counts it (%s)', (encoding) => {
    const runs = ['x'.repeat(60_000), Buffer.alloc(45_000, 'ab\u00ff\u0007 !').toString('base64'), '中'.repeat(3_000) + 'é'.repeat(1_001)];
    for (const run of runs) {
      const text = `before the run: ${run}\nand after it.`;
      let expected = REFERENCE[encoding]('before the run: ') + REFERENCE[encoding]('\nand after it.');
      for (let i = 0; i < run.length; i += 500) expected += REFERENCE[encoding](run.slice(i, i + 500));
      expect(countTokensOnce(text, encoding)).toBe(expected);
      expect(new TokenCounter({ encoding }).count(text)).toBe(expected);
    }
  });
});

describe('BpeCounter pieces', () => {
  it('counts the matches of its pattern wherever they start, as a global search finds them', () => {
    // A pattern that leaves characters out (the encodings' patterns leave none): the pieces are its global matches.
    const table = loadRankTable('o200k_base');
    const words = new BpeCounter(table, /[a-z]+|\d/gu);
    const whole = counterOf('o200k_base');
    const texts = ['checkpoint, writer; 7 rebuilds', '  leading and trailing  ', 'éa1b😀c', ''];
    for (const text of texts) {
      const pieces = [...text.matchAll(/[a-z]+|\d/gu)].map((m) => m[0]);
      expect(words.count(text)).toBe(pieces.reduce((sum, piece) => sum + whole.count(piece), 0));
    }
  });
});
