import { countTokens as rawO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as rawCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TokenCounter, defaultTokenCounter, loadPrompt } from '../../src/index.ts';
import { hasLongRun } from '../../src/tokens/token-counter.ts';

const plain = { disallowedSpecial: new Set<string>() };

describe('TokenCounter', () => {
  it('counts real o200k_base tokens by default', () => {
    const counter = new TokenCounter();
    expect(counter.encoding).toBe('o200k_base');
    expect(counter.count('Hello, world! Tokenizers are fun.')).toBe(9);
    const template = loadPrompt('checkpoint-template');
    expect(counter.count(template)).toBe(rawO200k(template));
    expect(counter.count('')).toBe(0);
  });

  it('counts cl100k_base tokens when configured', () => {
    const counter = new TokenCounter({ encoding: 'cl100k_base' });
    const text = 'Durable knowledge — 日本語 and emoji 😀, §5 budgets.';
    expect(counter.count(text)).toBe(rawCl100k(text));
    expect(counter.count(text)).not.toBe(new TokenCounter().count(text));
  });

  it('returns the same count from the cache as a cold count, for short and long texts', () => {
    const short = 'The quick brown fox — §5 current work at src/orders/create.ts:88.';
    const long = short.repeat(1_000); // past the length keyed by the text itself: keyed by digest
    for (const text of [short, long]) {
      const counter = new TokenCounter();
      const cold = counter.count(text);
      expect(counter.stats()).toEqual({ hits: 0, misses: 1, entries: 1 });
      // A different string object with the same content hits the cache.
      const copy = Buffer.from(text, 'utf8').toString('utf8');
      expect(counter.count(copy)).toBe(cold);
      expect(counter.stats()).toEqual({ hits: 1, misses: 1, entries: 1 });
      expect(cold).toBe(rawO200k(text));
    }
  });

  it('counts special-token strings as plain text instead of throwing', () => {
    const text = 'the user typed <|endoftext|> in a quote';
    expect(() => rawO200k(text)).toThrow(/Disallowed special token/);
    expect(new TokenCounter().count(text)).toBe(rawO200k(text, plain));
  });

  it('drops the least recently used count past maxEntries', () => {
    const counter = new TokenCounter({ maxEntries: 2 });
    counter.count('alpha');
    counter.count('beta');
    counter.count('alpha'); // alpha is now the most recent
    counter.count('gamma'); // evicts beta
    expect(counter.stats()).toEqual({ hits: 1, misses: 3, entries: 2 });
    counter.count('alpha');
    expect(counter.stats().hits).toBe(2);
    counter.count('beta');
    expect(counter.stats().misses).toBe(4);
  });

  it('bounds the characters kept as keys', () => {
    const counter = new TokenCounter({ maxKeyChars: 100 });
    counter.count('x'.repeat(60));
    counter.count('y'.repeat(60)); // 120 characters: the first key goes
    expect(counter.stats().entries).toBe(1);
    counter.count('z'.repeat(101)); // larger than the whole bound: counted, never cached
    expect(counter.stats().entries).toBe(1);
  });

  it('clears its cache and statistics', () => {
    const counter = new TokenCounter();
    counter.count('one');
    counter.clear();
    expect(counter.stats()).toEqual({ hits: 0, misses: 0, entries: 0 });
  });

  it('shares one default o200k_base instance', () => {
    expect(defaultTokenCounter).toBeInstanceOf(TokenCounter);
    expect(defaultTokenCounter.encoding).toBe('o200k_base');
  });
});

describe('hasLongRun', () => {
  const probe = /\S{1000}/;
  // Every code unit `\s` matches, and non-space ones of every width (an astral character is two code units).
  const spaces = [' ', '\t', '\n', '\v', '\f', '\r', '\u00a0', '\u1680', '\u2000', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
  const others = ['a', '\u0085', '\u180e', '\u200b', '\u3001', '😀', '\ud800'];

  it('agrees with /\\S{1000}/ on every code unit next to runs around 1000 characters long', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const unit = String.fromCharCode(c);
      const text = `${'x'.repeat(500)}${unit}${'x'.repeat(499)}`;
      expect(hasLongRun(text)).toBe(probe.test(text));
    }
  });

  it('agrees with /\\S{1000}/ on texts of runs and spaces', () => {
    const piece = fc.oneof(
      fc.tuple(fc.constantFrom(...others), fc.integer({ min: 0, max: 1_010 })).map(([unit, n]) => unit.repeat(n)),
      fc.constantFrom(...spaces),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(hasLongRun(text)).toBe(probe.test(text));
      }),
      { numRuns: 3_000 },
    );
  });
});
