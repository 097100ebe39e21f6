import { describe, expect, it } from 'vitest';
import { IMAGE_TOKENS, MAX_RATIO, UNCALIBRATED, addCounts, calibratedTokens, observe, type Calibration, type ContentCounts, type Observation } from '../src/calibration.ts';

/** A provider that counts text ×`text`, tool output ×`tool`, an image as `image` tokens and `perMessage` per message. */
const provider = (p: { text: number; tool: number; image: number; perMessage: number }) => (c: ContentCounts): number =>
  Math.round(c.text * p.text + c.tool * p.tool + c.images * p.image + (c.messages ?? 0) * p.perMessage);

/** An agent's context growing by one tool step per request: the call (text) and its output (tool), both messages. */
function learn(count: (c: ContentCounts) => number, steps: number, step: (i: number) => ContentCounts, start: ContentCounts): Calibration {
  let calibration = UNCALIBRATED;
  let counts = start;
  let previous: Observation | null = null;
  for (let i = 0; i < steps; i++) {
    counts = addCounts(counts, step(i));
    const now = { observed: count(counts), counts };
    calibration = observe(calibration, now, previous);
    previous = now;
  }
  return calibration;
}

describe('calibration', () => {
  it("learns a tool-output ratio apart from the text's, and a per-message count, from the reports of a growing context", () => {
    const truth = { text: 1.1, tool: 3, image: 1_500, perMessage: 30 };
    const calibration = learn(provider(truth), 20, (i) => ({ text: 20 + (i % 3) * 40, tool: 500 + (i % 5) * 300, images: 0, messages: 2 }), { text: 4_000, tool: 0, images: 0, messages: 2 });
    expect(calibration.tool).toBeCloseTo(3, 1);
    expect(calibration.text).toBeGreaterThan(0.9);
    expect(calibration.text).toBeLessThan(1.3);
    expect(calibration.perMessage).toBeGreaterThan(15);
    expect(calibration.perMessage).toBeLessThan(45);
    // A checkpoint's text is counted with the text ratio, not the heavy tool one.
    const boundary = calibratedTokens(calibration, { text: 3_000, tool: 0, images: 0, messages: 1 });
    expect(boundary).toBeLessThan(3_000 * 1.5);
    // The next request, predicted within a few percent.
    const next = { text: 4_000 + 20 * 60, tool: 20 * 1_100, images: 0, messages: 42 };
    expect(Math.abs(calibratedTokens(calibration, next) - provider(truth)(next)) / provider(truth)(next)).toBeLessThan(0.05);
  });

  it('counts images by what the provider reports for them, not by their bytes', () => {
    const truth = { text: 1, tool: 1, image: 1_600, perMessage: 4 };
    const calibration = learn(provider(truth), 12, (i) => ({ text: 30, tool: 200, images: i % 2, messages: 2 }), { text: 2_000, tool: 0, images: 0, messages: 1 });
    expect(calibration.image * IMAGE_TOKENS).toBeGreaterThan(1_200);
    expect(calibration.image * IMAGE_TOKENS).toBeLessThan(2_000);
  });

  it('is deterministic, keeps its bounds, learns nothing from an empty report and from the whole request when the context shrank', () => {
    const step = (i: number): ContentCounts => ({ text: 10 + i, tool: 100 * i, images: 0, messages: 2 });
    const a = learn(provider({ text: 1, tool: 2, image: 1_000, perMessage: 3 }), 15, step, { text: 500, tool: 0, images: 0, messages: 1 });
    const b = learn(provider({ text: 1, tool: 2, image: 1_000, perMessage: 3 }), 15, step, { text: 500, tool: 0, images: 0, messages: 1 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const wild = learn(() => 10_000_000, 5, step, { text: 500, tool: 0, images: 0, messages: 1 });
    expect(wild.text).toBeLessThanOrEqual(MAX_RATIO);
    expect(wild.tool).toBeLessThanOrEqual(MAX_RATIO);
    const counts = { text: 1_000, tool: 0, images: 0, messages: 1 };
    expect(observe(UNCALIBRATED, { observed: 0, counts }, null)).toBe(UNCALIBRATED);
    expect(observe(UNCALIBRATED, { observed: 900, counts }, { observed: 1_000, counts: { ...counts, text: 2_000 } })).not.toBe(UNCALIBRATED);
  });
});
