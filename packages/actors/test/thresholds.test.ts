import { describe, expect, it } from 'vitest';
import { ThresholdError, defaultLadderPercents, defaultReserved, parseQuantity, resolveThresholds, usableWindow } from '../src/thresholds.ts';

describe('thresholds', () => {
  it('scenario 1: picks the default ladder by usable window', () => {
    expect([7_999, 8_000, 24_999, 25_000, 200_000, 200_001, 500_000, 500_001].map((w) => defaultLadderPercents(w).length)).toEqual([0, 4, 4, 4, 4, 9, 9, 18]);
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

  it('scales the reserves with windows under 160 000 tokens and leaves larger ones as they were', () => {
    // The table in docs/architecture.md ("Reserves and thresholds"): window → usable, default reserve, ladder.
    const rows = [32_000, 64_000, 128_000, 200_000, 1_000_000].map((contextWindow) => {
      const usable = usableWindow({ contextWindow });
      return { contextWindow, usable, reserved: defaultReserved(usable), ladder: resolveThresholds(usable, { reserved: defaultReserved(usable) }) };
    });
    expect(rows.map((r) => [r.contextWindow, r.usable, r.reserved])).toEqual([
      [32_000, 21_600, 11_232],
      [64_000, 43_200, 13_000],
      [128_000, 86_400, 13_000],
      [200_000, 148_000, 13_000],
      [1_000_000, 948_000, 13_000],
    ]);
    expect(rows[0]?.ladder).toEqual([4_320, 8_640, 10_368]);
    expect(rows[1]?.ladder).toEqual([8_640, 17_280, 25_920, 30_200]);
    expect(rows[2]?.ladder).toEqual([17_280, 34_560, 51_840, 69_120]);
    expect(rows[3]?.ladder).toEqual([29_600, 59_200, 88_800, 118_400]);
    expect(rows[4]?.ladder).toHaveLength(18);
    // A declared output limit below the shares is used as it is; an input limit leaves no output reserve.
    expect(usableWindow({ contextWindow: 64_000, maxOutputTokens: 8_000 })).toBe(48_000);
    expect(usableWindow({ contextWindow: 64_000, inputLimit: 60_000 })).toBe(48_000);
    // Above 160 000 tokens the fixed caps decide, as before.
    for (const contextWindow of [160_000, 400_000, 1_048_576]) expect(usableWindow({ contextWindow })).toBe(contextWindow - 20_000 - 32_000);
  });

  it('parses quantities and rejects bad ones with the value named', () => {
    expect(parseQuantity('1.5M', 0)).toBe(1_500_000);
    expect(parseQuantity('100k', 0)).toBe(100_000);
    expect(parseQuantity('25%', 1_001)).toBe(250);
    expect(parseQuantity(42, 0)).toBe(42);
    for (const bad of ['0%', '101%', 'abc', '-5', '1.5G']) expect(() => parseQuantity(bad, 1000)).toThrow(/threshold/);
  });
});
