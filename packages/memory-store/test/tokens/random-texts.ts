import type { NamedText } from './repo-fixture-texts.ts';

/** A seeded generator of 32-bit unsigned integers (mulberry32): the same seed always gives the same texts. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const range = (from: number, to: number): [number, number] => [from, to];

/** Pieces a random text is made of: fixed strings, or code-point ranges (inclusive) drawn from. */
const POOLS: readonly (readonly string[] | readonly [number, number][])[] = [
  [...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~'],
  [' ', ' ', ' ', '  ', '\t', '\n', '\n\n', '\r', '\r\n', '\u000b', '\f', '\u0085', '\u00a0', '\u2028', '\u3000', '\ufeff'],
  ['the', ' the', ' function', 'const ', 'return', 'Hello', 'HTTP', 'naïve', 'don', "'s", "'T", "'ll", "'VE", "'re", "'d", "'M", 'https://', '//', '/*', '*/', '=>', '===', '{\n', '}\n', 'ÄÖÜ', 'ß', 'İ', 'ǅ'],
  ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|endofprompt|>', '<|im_sep|>', '<|', '|>'],
  [range(0x20, 0x7e)],
  [range(0x00, 0x1f), range(0x7f, 0x9f)],
  [range(0xa0, 0xff), range(0x100, 0x24f)],
  [range(0x370, 0x4ff), range(0x530, 0x58f)],
  [range(0x300, 0x36f), range(0x1ab0, 0x1aff), range(0x20d0, 0x20ff)],
  [range(0x4e00, 0x9fff), range(0x3040, 0x30ff), range(0xac00, 0xd7a3), range(0x3000, 0x303f), range(0xff00, 0xffef)],
  [range(0x590, 0x6ff), range(0x900, 0x97f), range(0xe00, 0xe7f), range(0x10a0, 0x10ff)],
  [range(0x30, 0x39), range(0x660, 0x669), range(0xff10, 0xff19), range(0xb2, 0xb3), range(0x2160, 0x2188)],
  [range(0x1f300, 0x1faff), range(0x1f3fb, 0x1f3ff), range(0x200d, 0x200d), range(0xfe0f, 0xfe0f), range(0x1f1e6, 0x1f1ff)],
  [range(0x10000, 0x10ffff)],
  [range(0xd800, 0xdfff)],
  [range(0xfffe, 0xffff), range(0xfdd0, 0xfdef), range(0xe000, 0xf8ff)],
];

/**
 * `count` random texts of up to `maxLength` pieces each, from the seed `seed`: a mix of ASCII, whitespace of every
 * kind, words and contractions, special-token strings, control characters, Latin, Greek, Cyrillic, combining marks,
 * CJK, Hangul, right-to-left and Indic scripts, digits of many systems, emoji and their modifiers, every plane, lone
 * surrogates (a surrogate is drawn as one code unit, so it is lone unless the next draw completes a pair) and
 * noncharacters. Each text draws from two to four pools only, so runs of one kind are long enough to merge.
 */
export function randomTexts(seed: number, count: number, maxLength: number): NamedText[] {
  const next = generator(seed);
  const texts: NamedText[] = [];
  for (let t = 0; t < count; t++) {
    const pools = Array.from({ length: 2 + (next() % 3) }, () => POOLS[next() % POOLS.length] ?? []);
    const length = next() % (maxLength + 1);
    let text = '';
    for (let i = 0; i < length; i++) {
      const pool = pools[next() % pools.length] ?? [];
      const pick = pool[next() % pool.length];
      if (typeof pick === 'string') {
        text += pick;
      } else if (pick !== undefined) {
        const point = pick[0] + (next() % (pick[1] - pick[0] + 1));
        text += point >= 0xd800 && point <= 0xdfff ? String.fromCharCode(point) : String.fromCodePoint(point);
      }
    }
    texts.push({ name: `random text ${t} of seed ${seed}`, text });
  }
  return texts;
}

/** Kinds of long pieces: each a run the split patterns keep whole (letters, symbols, whitespace). */
const LONG_PIECE_KINDS: readonly (readonly string[])[] = [
  [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüßñçøåæ'],
  [...'eeeeeeeeeettttttttaaaaaaoooooinnnnsssshhhrrrdlcu'],
  [...'中文字符测试汉语日本語の文字列한국어문자열'],
  [...'абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГД'],
  ['e\u0301', 'a\u0308', 'n\u0303', 'क्ष', 'ि', 'ं', 'ก', 'ข', 'ค', '\u0e31'],
  [...'!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~=-+*/<>&|'],
  ['😀', '👍', '🏽', '\u200d', '\ufe0f', '❤', '★', '→', '∑', '©', '™', '\ufeff'],
  [' ', ' ', ' ', ' ', '\t', '\n', '\r\n', '\u00a0', '\u3000'],
  [' ', ' ', ' ', ' ', ' ', ' ', ' ', '\t'],
  ['\u0000', '\u0001', '\u001b', '\u007f', '\u0085', '\ud800', '\udfff', '\ufffd'],
];

/**
 * `count` texts from the seed `seed`, each one long run (65 to 999 characters, so more bytes than the counter merges
 * by scanning) of one kind, optionally after a word: long pieces, merged through the counter's queue.
 */
export function longPieceTexts(seed: number, count: number): NamedText[] {
  const next = generator(seed);
  const texts: NamedText[] = [];
  for (let t = 0; t < count; t++) {
    const kind = LONG_PIECE_KINDS[next() % LONG_PIECE_KINDS.length] ?? [];
    const length = 65 + (next() % 935);
    let text = next() % 2 === 0 ? 'word ' : '';
    for (let i = 0; i < length; i++) text += kind[next() % kind.length] ?? '';
    texts.push({ name: `long piece ${t} of seed ${seed}`, text });
  }
  return texts;
}
