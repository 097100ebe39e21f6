import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RECENT_USER_SEPARATOR, selectRecentUserInput } from '../../src/rebuild/recent-user-input.ts';
import { loadPrompt } from '../../src/templates/prompt-registry.ts';
import { prefixWithin, suffixWithin, truncateHeadTail } from '../../src/tokens/head-tail-truncate.ts';
import { TokenCounter, defaultTokenCounter } from '../../src/tokens/token-counter.ts';
import { LONE_SURROGATE, words } from './fixtures.ts';

const counter = defaultTokenCounter;
const marker = (elided: number): string => `[… ${elided} tokens elided …]`;

// Strings rich in astral characters (emoji, ZWJ sequences, mathematical letters) mixed with ASCII and BMP text.
const ASTRAL = ['😀', '🧑‍💻', '👍🏽', '𝔸', '𝒳', '🀄', '🇫🇷', '𠜎', '😶‍🌫️'];
const unit = fc.oneof(
  { arbitrary: fc.constantFrom(...ASTRAL), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 6 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), weight: 2 },
  { arbitrary: fc.constantFrom(' ', '\n', 'é', '中文'), weight: 1 },
);
const richText = fc.string({ unit, minLength: 1, maxLength: 1_500 });

describe('prefixWithin / suffixWithin', () => {
  it('return the whole text when it fits, and a verbatim piece within the budget otherwise', () => {
    const text = words(2_000, 3);
    expect(prefixWithin(text, 100_000, counter)).toBe(text);
    const head = prefixWithin(text, 300, counter);
    const tail = suffixWithin(text, 300, counter);
    expect(text.startsWith(head)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
    expect(counter.count(head)).toBeLessThanOrEqual(300);
    expect(counter.count(tail)).toBeLessThanOrEqual(300);
    // Close to the budget, not a token-starved cut.
    expect(counter.count(head)).toBeGreaterThan(280);
    expect(counter.count(tail)).toBeGreaterThan(280);
    expect(prefixWithin(text, 0, counter)).toBe('');
  });

  it('never cut inside a surrogate pair (property)', () => {
    fc.assert(
      fc.property(richText, fc.integer({ min: 1, max: 120 }), (text, budget) => {
        const head = prefixWithin(text, budget, counter);
        const tail = suffixWithin(text, budget, counter);
        expect(text.startsWith(head)).toBe(true);
        expect(text.endsWith(tail)).toBe(true);
        expect(head).not.toMatch(LONE_SURROGATE);
        expect(tail).not.toMatch(LONE_SURROGATE);
        expect(counter.count(head)).toBeLessThanOrEqual(budget);
        expect(counter.count(tail)).toBeLessThanOrEqual(budget);
      }),
      { numRuns: 150 },
    );
  });
});

describe('truncateHeadTail', () => {
  it('keeps ≈60 % head and ≈30 % tail verbatim around a marker with the elided token count', () => {
    const text = words(6_000, 9);
    const cut = truncateHeadTail(text, 2_000, marker, counter);
    expect(cut).not.toBeNull();
    if (cut === null) return;
    expect(cut.truncated).toBe(true);
    expect(cut.text).toBe(`${cut.head}\n${marker(cut.elidedTokens)}\n${cut.tail}`);
    expect(text.startsWith(cut.head)).toBe(true);
    expect(text.endsWith(cut.tail)).toBe(true);
    expect(counter.count(cut.text)).toBeLessThanOrEqual(2_000);
    const headTokens = counter.count(cut.head);
    const tailTokens = counter.count(cut.tail);
    expect(headTokens).toBeGreaterThan(1_100);
    expect(headTokens).toBeLessThanOrEqual(1_200);
    expect(tailTokens).toBeGreaterThan(500);
    expect(tailTokens).toBeLessThanOrEqual(600);
    // The whole less what was kept: within a token or two of counting the middle itself.
    expect(Math.abs(cut.elidedTokens - counter.count(text.slice(cut.head.length, text.length - cut.tail.length)))).toBeLessThanOrEqual(2);
  });

  it('returns a fitting text unchanged and null when not even the marker fits', () => {
    expect(truncateHeadTail('short text', 50, marker, counter)).toEqual({
      text: 'short text',
      truncated: false,
      head: 'short text',
      tail: '',
      elidedTokens: 0,
    });
    expect(truncateHeadTail(words(500), 3, marker, counter)).toBeNull();
  });

  it('keeps head and tail, stays within the cap and never splits a surrogate pair (property)', () => {
    fc.assert(
      fc.property(richText, fc.integer({ min: 12, max: 400 }), (text, cap) => {
        const cut = truncateHeadTail(text, cap, marker, counter);
        if (counter.count(text) <= cap) {
          expect(cut?.text).toBe(text);
          return;
        }
        expect(cut).not.toBeNull();
        if (cut === null) return;
        expect(counter.count(cut.text)).toBeLessThanOrEqual(cap);
        expect(cut.text).not.toMatch(LONE_SURROGATE);
        expect(text.startsWith(cut.head)).toBe(true);
        expect(text.endsWith(cut.tail)).toBe(true);
        expect(cut.head.length + cut.tail.length).toBeLessThan(text.length);
        expect(cut.text).toContain(marker(cut.elidedTokens));
      }),
      { numRuns: 150 },
    );
  });
});

describe('selectRecentUserInput', () => {
  const budget = { totalTokens: 16_000, perMessageTokens: 2_000 };
  const elidedLine = (id: string): RegExp =>
    new RegExp(`^\\[… \\d+ tokens of message ${id} elided here; the full text is in the conversation history under that id …\\]$`, 'm');

  it('shows messages verbatim, oldest → newest, under a label line with their id, skipping blank ones', () => {
    const entries = selectRecentUserInput(
      [
        { id: 'u1', text: 'first request' },
        { id: 'u2', text: '   \n ' },
        { id: 'u3', text: 'second request\nwith two lines' },
      ],
      budget,
      counter,
    );
    expect(entries.map((entry) => entry.id)).toEqual(['u1', 'u3']);
    expect(entries.map((entry) => entry.block)).toEqual([
      '[user message u1]\nfirst request',
      '[user message u3]\nsecond request\nwith two lines',
    ]);
    expect(entries.every((entry) => !entry.truncated)).toBe(true);
  });

  it('cuts a long message to its head and tail with a marker naming the message id and the elided tokens', () => {
    const text = `START-${words(5_000, 4)}-END`;
    const [entry] = selectRecentUserInput([{ id: 'long-1', text }], budget, counter);
    expect(entry?.truncated).toBe(true);
    const body = entry?.block.slice('[user message long-1]\n'.length) ?? '';
    expect(body.startsWith('START-')).toBe(true);
    expect(body.endsWith('-END')).toBe(true);
    expect(body).toMatch(elidedLine('long-1'));
    expect(counter.count(body)).toBeLessThanOrEqual(2_000);
    expect(loadPrompt('rebuild-recent-user-elided')).toContain('{{ELIDED_TOKENS}}');
  });

  it('never splits a surrogate pair in any selected entry (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ id: fc.stringMatching(/^[a-z0-9-]{1,12}$/), text: richText }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 20, max: 300 }),
        (messages, perMessageTokens) => {
          const entries = selectRecentUserInput(messages, { totalTokens: 1_000, perMessageTokens }, counter);
          const joined = entries.map((entry) => entry.block).join(RECENT_USER_SEPARATOR);
          expect(joined).not.toMatch(LONE_SURROGATE);
          expect(counter.count(joined)).toBeLessThanOrEqual(1_000);
          for (const entry of entries) {
            const body = entry.block.slice(entry.block.indexOf('\n') + 1);
            expect(counter.count(body)).toBeLessThanOrEqual(perMessageTokens);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stops at the first entry that does not fit: older entries are dropped even when they would fit', () => {
    const messages = [
      { id: 'old-small', text: 'tiny' },
      { id: 'middle-big', text: words(3_000, 5) },
      { id: 'newest', text: words(300, 6) },
    ];
    const total = 1_000;
    const entries = selectRecentUserInput(messages, { totalTokens: total, perMessageTokens: 2_000 }, counter);
    expect(entries.map((entry) => entry.id)).toEqual(['newest']);
    // With room for the truncated middle message, all three are shown.
    const roomy = selectRecentUserInput(messages, { totalTokens: 3_000, perMessageTokens: 2_000 }, counter);
    expect(roomy.map((entry) => entry.id)).toEqual(['old-small', 'middle-big', 'newest']);
  });

  it('keeps the newest entries within the total and selects nothing with a total of 0', () => {
    const messages = Array.from({ length: 50 }, (_, i) => ({ id: `m${i}`, text: words(200, i + 1) }));
    const entries = selectRecentUserInput(messages, { totalTokens: 2_500, perMessageTokens: 2_000 }, counter);
    expect(entries.length).toBeGreaterThan(5);
    expect(entries.length).toBeLessThan(50);
    expect(entries.map((entry) => entry.id)).toEqual(messages.slice(50 - entries.length).map((m) => m.id));
    const joined = entries.map((entry) => entry.block).join(RECENT_USER_SEPARATOR);
    expect(new TokenCounter().count(joined)).toBeLessThanOrEqual(2_500);
    expect(selectRecentUserInput(messages, { totalTokens: 0, perMessageTokens: 2_000 }, counter)).toEqual([]);
  });
});
