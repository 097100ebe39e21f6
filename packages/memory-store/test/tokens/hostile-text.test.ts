import { describe, expect, it } from 'vitest';
import { TokenCounter, countTokensOnce } from '../../src/tokens/token-counter.ts';

/** Texts agents really send that a tokenizer may choke on. */
const HOSTILE: Record<string, string> = {
  'special tokens': 'before <|endoftext|> <|im_start|>system<|im_end|> <|fim_prefix|> after',
  'lone surrogates': 'x\ud800y\udfffz',
  NUL: 'a\u0000b\u0000\u0000c',
  '60 KB single line': 'x'.repeat(60_000),
  'every plane': Array.from({ length: 17 }, (_, plane) => String.fromCodePoint(plane * 0x10000 + 0x41)).join(' '),
  'control characters': '\u0001\u0002\u001b[31mred\u001b[0m\u007f\u0085\u2028\u2029',
  'combining marks': 'e\u0301'.repeat(2_000),
};

describe('token counting never throws', () => {
  it.each(Object.entries(HOSTILE))('counts %s', (_name, text) => {
    const once = countTokensOnce(text);
    expect(once).toBeGreaterThan(0);
    expect(new TokenCounter().count(text)).toBe(once);
  });

  it('counts special-token strings as the plain text they are', () => {
    expect(countTokensOnce('<|endoftext|>')).toBeGreaterThan(1);
  });
});
