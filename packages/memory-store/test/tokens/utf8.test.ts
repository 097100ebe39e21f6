import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeUtf8Into, isValidUtf8 } from '../../src/tokens/utf8.ts';

const fatal = new TextDecoder('utf-8', { fatal: true });
function decodes(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

describe('encodeUtf8Into', () => {
  it('writes what Buffer.from writes, lone surrogates as U+FFFD, and negates the length when there was one', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 50 }), fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)), maxLength: 20 }), (a, b) => {
        const text = a + b;
        const out = new Uint8Array(text.length * 3);
        const written = encodeUtf8Into(text, out);
        const expected = Buffer.from(text, 'utf8');
        expect(Buffer.from(out.subarray(0, Math.abs(written)))).toEqual(expected);
        expect(written < 0).toBe(/\p{Cs}/u.test(text));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('isValidUtf8', () => {
  it('agrees with a fatal TextDecoder on random bytes and on every edge of the format', () => {
    const edges = [
      [0xc0, 0x80], [0xc1, 0xbf], [0xc2, 0x80], [0xdf, 0xbf], [0xe0, 0x9f, 0xbf], [0xe0, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xed, 0xa0, 0x80],
      [0xef, 0xbb, 0xbf], [0xf0, 0x8f, 0xbf, 0xbf], [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80],
      [0xe2, 0x82], [0x80], [0xff], [0x41, 0xe2, 0x82, 0xac, 0x42],
    ];
    for (const edge of edges) expect(isValidUtf8(Uint8Array.from(edge), 0, edge.length)).toBe(decodes(Uint8Array.from(edge)));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), fc.nat(3), (bytes, skip) => {
        const start = Math.min(skip, bytes.length);
        expect(isValidUtf8(bytes, start, bytes.length)).toBe(decodes(bytes.subarray(start)));
      }),
      { numRuns: 20_000 },
    );
  });
});
