import { describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import {
  SECTION_CUT_MARKER,
  TRUNCATION_MARKER,
  type TokenCount,
  readBudgeted,
  readSectionAware,
} from '../../src/tokens/budgeted-read.ts';
import { defaultTokenCounter } from '../../src/tokens/token-counter.ts';

const tokens = (text: string) => defaultTokenCounter.count(text);
// Counts UTF-16 code units: makes the arithmetic of a test exact, and cuts land on arbitrary indexes.
const chars: TokenCount = { count: (text) => text.length };
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function prose(lines: number, seed = 'line'): string {
  return Array.from(
    { length: lines },
    (_, index) => `- ${seed} ${index}: the reconnect loop backs off 250 ms, then doubles up to 8 s (port 4222).`,
  ).join('\n');
}

function checkpoint(bodyLines: number): string {
  const sections = ['§1 Active intent', '§2 Next concrete action', '§4 Task tree', '§7 Discovered knowledge'];
  const parts = ['# Session checkpoint', '', '_Maintained by the writer; keep headers and italic lines._', ''];
  sections.forEach((title, index) => {
    parts.push(`## ${title}`, `_What belongs in ${title}._`, '', prose(bodyLines, `s${index}`));
    parts.push(`- See checkpoint-topic-${index}.md (3 items) — moved details`, '');
  });
  return `${parts.join('\n')}\n`;
}

describe('readBudgeted', () => {
  it('returns text within the cap unchanged', () => {
    const text = prose(3);
    expect(readBudgeted(text, tokens(text))).toBe(text);
  });

  it.each([50, 300, 1000])('cuts at a line end, appends the marker and stays within %i tokens', (cap) => {
    const text = `${prose(400)}\n`;
    const output = readBudgeted(text, cap);
    expect(tokens(output)).toBeLessThanOrEqual(cap);
    expect(output.endsWith(`\n${TRUNCATION_MARKER}\n`)).toBe(true);
    const kept = output.slice(0, -`${TRUNCATION_MARKER}\n`.length);
    expect(kept.endsWith('\n')).toBe(true);
    expect(text.startsWith(kept)).toBe(true);
    // Not needlessly short: whole lines only, but the 0.95 aim leaves most of a larger budget used.
    expect(kept.split('\n').length).toBeGreaterThan(1);
    if (cap >= 300) expect(tokens(output)).toBeGreaterThan(cap * 0.75);
  });

  it('cuts mid-line only when the text has no newline before the cut', () => {
    const text = 'word '.repeat(5000);
    const output = readBudgeted(text, 200);
    expect(tokens(output)).toBeLessThanOrEqual(200);
    expect(output).toMatch(/^(?:word )+\S*\n\[… truncated/);
  });

  it('never splits a surrogate pair, with real tokens or at arbitrary code-unit cuts', () => {
    const emoji = '😀🚀𝄞 '.repeat(800);
    for (const cap of [101, 333, 1001]) {
      const real = readBudgeted(emoji, cap);
      expect(tokens(real)).toBeLessThanOrEqual(cap);
      expect(real).not.toMatch(LONE_SURROGATE);
      const units = readBudgeted(emoji, cap, chars);
      expect(units.length).toBeLessThanOrEqual(cap);
      expect(units).not.toMatch(LONE_SURROGATE);
      expect(units.length).toBeGreaterThan(TRUNCATION_MARKER.length + 1);
    }
  });

  it('returns the empty string when not even the marker fits, and rejects a bad cap', () => {
    expect(readBudgeted(prose(50), 2)).toBe('');
    expect(readBudgeted('', 0)).toBe('');
    expect(() => readBudgeted('x', -1)).toThrow(MemoryStoreError);
    expect(() => readBudgeted('x', 1.5)).toThrow(/non-negative integer/);
  });

  it('uses an injected counter', () => {
    const text = `${'abcdefghi\n'.repeat(100)}`;
    const output = readBudgeted(text, 200, chars);
    expect(output.length).toBeLessThanOrEqual(200);
    expect(output.endsWith(`${TRUNCATION_MARKER}\n`)).toBe(true);
    expect(output.length).toBeGreaterThan(150);
  });
});

describe('readSectionAware', () => {
  it('returns text within the cap unchanged', () => {
    const text = checkpoint(2);
    expect(readSectionAware(text, tokens(text))).toBe(text);
  });

  it.each([250, 600, 1500])('keeps title, headers, italics and index lines within %i tokens', (cap) => {
    const text = checkpoint(40);
    expect(tokens(text)).toBeGreaterThan(cap);
    const output = readSectionAware(text, cap);
    expect(tokens(output)).toBeLessThanOrEqual(cap);
    const keep = text.split('\n').filter((line) => /^(?:# |## |_|- See )/.test(line));
    expect(keep.length).toBe(1 + 1 + 4 * 3);
    for (const line of keep) expect(output.split('\n')).toContain(line);
    // Skeleton lines keep their order.
    const positions = keep.map((line) => output.indexOf(line));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(output).toContain(SECTION_CUT_MARKER);
  });

  it('fills bodies in order: earlier sections whole, the first that does not fit partly, later ones cut', () => {
    const text = checkpoint(30);
    const output = readSectionAware(text, 1500);
    const sections = output.split(/^(?=## )/m).slice(1);
    expect(sections).toHaveLength(4);
    const [first, second, third, fourth] = sections as [string, string, string, string];
    expect(first).toContain(prose(30, 's0'));
    expect(first).not.toContain(SECTION_CUT_MARKER);
    // Each body is ~900 tokens: the second fits only partly, the later ones not at all.
    expect(second).toContain('- s1 0:');
    expect(second).not.toContain('- s1 29:');
    expect(second).toContain(SECTION_CUT_MARKER);
    for (const cut of [third, fourth]) {
      expect(cut).toContain(SECTION_CUT_MARKER);
      expect(cut).not.toMatch(/^- s\d \d+:/m);
    }
  });

  it('keeps a partial body only when more than 50 tokens remain', () => {
    // Exact arithmetic with a code-unit counter: skeleton + body 1 fit, then a given amount is left for body 2.
    const body1 = 'a'.repeat(99);
    const body2 = Array.from({ length: 20 }, () => 'b'.repeat(19)).join('\n');
    const text = `# T\n## One\n_i1_\n${body1}\n## Two\n_i2_\n${body2}\n`;
    const skeletonAndBody1 = `# T\n## One\n_i1_\n## Two\n_i2_`.length + body1.length + 1;
    const marker = SECTION_CUT_MARKER.length + 1;
    const roomy = readSectionAware(text, skeletonAndBody1 + marker + 100, chars);
    expect(roomy).toContain(`${body1}\n`);
    expect(roomy).toContain('bbbbbbbbbbbbbbbbbbb\n');
    expect(roomy).toContain(SECTION_CUT_MARKER);
    const tight = readSectionAware(text, skeletonAndBody1 + marker + 50, chars);
    expect(tight).toContain(`${body1}\n`);
    expect(tight).not.toContain('bbb');
    expect(tight).toBe(`# T\n## One\n_i1_\n${body1}\n## Two\n_i2_\n${SECTION_CUT_MARKER}\n`);
    expect(tight.length).toBeLessThanOrEqual(skeletonAndBody1 + marker + 50);
  });

  it('keeps an index line that sits in the middle of a cut body, in place', () => {
    const body = `${prose(20, 'x')}\n- See checkpoint-middle.md (7 items) — kept\n${prose(20, 'y')}`;
    const text = `# Session checkpoint\n\n## §5 Current work\n_Italic._\n\n${body}\n`;
    const output = readSectionAware(text, 300);
    expect(tokens(output)).toBeLessThanOrEqual(300);
    expect(output).toContain('- See checkpoint-middle.md (7 items) — kept');
    expect(output).toContain('- x 0:');
    expect(output).not.toContain('- y 19:');
  });

  it('treats "## " inside a code fence as body text', () => {
    const text = `# T\n## Real\n_i_\n\`\`\`\n## not a header ${'z'.repeat(400)}\n\`\`\`\n`;
    const output = readSectionAware(text, 40);
    expect(tokens(output)).toBeLessThanOrEqual(40);
    expect(output).toContain('## Real');
    expect(output).not.toContain('## not a header');
  });

  it('cuts the skeleton plainly when even it exceeds the cap', () => {
    const text = checkpoint(10);
    const output = readSectionAware(text, 60);
    expect(tokens(output)).toBeLessThanOrEqual(60);
    expect(output.startsWith('# Session checkpoint\n')).toBe(true);
    expect(output).toContain(TRUNCATION_MARKER);
    expect(output).not.toContain('- s0 0:');
  });

  it('never splits a surrogate pair in a partial body', () => {
    const text = `# T\n## Emoji\n_i_\n${'😀🚀 '.repeat(600)}\n## Next\n_j_\nbody\n`;
    for (const cap of [120, 401, 777]) {
      const real = readSectionAware(text, cap);
      expect(tokens(real)).toBeLessThanOrEqual(cap);
      expect(real).not.toMatch(LONE_SURROGATE);
      const units = readSectionAware(text, cap, chars);
      expect(units.length).toBeLessThanOrEqual(cap);
      expect(units).not.toMatch(LONE_SURROGATE);
      expect(units).toContain('## Next');
    }
  });
});
