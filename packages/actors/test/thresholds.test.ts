import { describe, expect, it } from 'vitest';
import { ThresholdError, defaultLadderPercents, parseQuantity, resolveThresholds, usableWindow } from '../src/thresholds.ts';

describe('thresholds', () => {
  it('scenario 1: picks the default ladder by usable window', () => {
    expect([24_999, 25_000, 200_000, 200_001, 500_000, 500_001].map((w) => defaultLadderPercents(w).length)).toEqual([0, 4, 4, 9, 9, 18]);
    expect(defaultLadderPercents(500_001).at(-1)).toBe(90);
  });

  it('scenario 2: clamps the first over-cap value, drops later ones, sorts and dedupes', () => {
    expect(resolveThresholds(60_000, { overrides: ['50K', '30K', '60K'] })).toEqual([30_000, 47_000]);
    expect(() => resolveThresholds(13_000, { overrides: ['10%'] })).toThrow(ThresholdError);
  });

  it('computes the usable window from model limits (reference worked examples)', () => {
    expect(usableWindow({ contextWindow: 200_000, maxOutputTokens: 32_000 })).toBe(148_000);
    expect(usableWindow({ contextWindow: 1_000_000, maxOutputTokens: 64_000 })).toBe(947_000);
    expect(resolveThresholds(148_000)).toEqual([29_600, 59_200, 88_800, 118_400]);
    expect(resolveThresholds(947_000)[0]).toBe(47_350);
  });

  it('parses quantities and rejects bad ones with the value named', () => {
    expect(parseQuantity('1.5M', 0)).toBe(1_500_000);
    expect(parseQuantity('100k', 0)).toBe(100_000);
    expect(parseQuantity('25%', 1_001)).toBe(250);
    expect(parseQuantity(42, 0)).toBe(42);
    for (const bad of ['0%', '101%', 'abc', '-5', '1.5G']) expect(() => parseQuantity(bad, 1000)).toThrow(/threshold/);
  });
});
