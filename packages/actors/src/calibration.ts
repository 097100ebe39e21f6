/**
 * How many tokens the provider counts for what Baton counts. Baton counts every message with its own tokenizer
 * (o200k); a provider may tokenise otherwise (Anthropic, Gemini, local models) and counts images by their size, not
 * their bytes. Each reply reports what the provider counted for the request it answered, so the session learns a
 * ratio per kind of content — text (the system prompt, tools, user and assistant messages), tool output, images — and
 * every fitting decision counts with it. The ratios are part of the session machine's context, computed from logged
 * inputs only, so a replay learns exactly the same ones.
 */

/** Baton's own count of one image (a provider counts an image by its size, typically 500–2 000 tokens). */
export const IMAGE_TOKENS = 1_000;

/** Bounds of a ratio: a provider never counts a tenth of what Baton does, nor ten times as much. */
export const MIN_RATIO = 0.1;
export const MAX_RATIO = 10;

/** Share by which a correction downwards is applied (upwards at once: a count that was too low is what overflows). */
const DOWN_RATE = 0.5;

/** What Baton counted, by kind: tokens of text, tokens of tool output, and images. */
export interface ContentCounts {
  readonly text: number;
  readonly tool: number;
  readonly images: number;
}

export const NO_CONTENT: ContentCounts = { text: 0, tool: 0, images: 0 };

/** Provider tokens per Baton token, per kind (per `IMAGE_TOKENS` for images), and how many replies taught them. */
export interface Calibration {
  readonly text: number;
  readonly tool: number;
  readonly image: number;
  readonly observations: number;
}

export const UNCALIBRATED: Calibration = { text: 1, tool: 1, image: 1, observations: 0 };

/** One reported request: what the provider counted, and what Baton counted of the same request. */
export interface Observation {
  readonly observed: number;
  readonly counts: ContentCounts;
}

export function addCounts(a: ContentCounts, b: ContentCounts): ContentCounts {
  return { text: a.text + b.text, tool: a.tool + b.tool, images: a.images + b.images };
}

function minus(a: ContentCounts, b: ContentCounts): ContentCounts {
  return { text: a.text - b.text, tool: a.tool - b.tool, images: a.images - b.images };
}

/** What a message counts as: a tool result's tokens are tool output, anyone else's text; its images apart. */
export function countsOfMessage(m: { readonly role: string; readonly tokens: number; readonly images?: number | undefined }): ContentCounts {
  const images = m.images ?? 0;
  return m.role === 'tool' ? { text: 0, tool: m.tokens, images } : { text: m.tokens, tool: 0, images };
}

/** The provider's count of `counts`, by the calibration (rounded up). */
export function calibratedTokens(calibration: Calibration, counts: ContentCounts): number {
  return Math.ceil(counts.text * calibration.text + counts.tool * calibration.tool + counts.images * IMAGE_TOKENS * calibration.image);
}

const clamp = (r: number): number => Math.min(MAX_RATIO, Math.max(MIN_RATIO, r));

/**
 * The calibration after one reply's report. With the previous report of the same context (`previous`), the change
 * between the two requests is what is learnt from — the new content alone, so a tool output counted three times as
 * heavy moves the tool ratio and leaves the text ratio where it was; otherwise the whole request is. The first report
 * of a session sets every ratio to the observed overall ratio. Each later one moves the ratios by a normalised
 * least-mean-squares step over the kinds in the sample (in proportion to how much of each it holds): at once when
 * the provider counted more than predicted, by half when it counted less.
 */
export function observe(calibration: Calibration, now: Observation, previous: Observation | null): Calibration {
  const whole = sample(now);
  if (calibration.observations === 0) {
    if (whole === null) return calibration;
    const ratio = clamp(whole.observed / weight(whole.x));
    return { text: ratio, tool: ratio, image: ratio, observations: 1 };
  }
  const change = previous === null ? null : sample({ observed: now.observed - previous.observed, counts: minus(now.counts, previous.counts) });
  const s = change ?? whole;
  if (s === null) return calibration;
  const r = [calibration.text, calibration.tool, calibration.image];
  const predicted = s.x.reduce((sum, x, i) => sum + x * (r[i] ?? 1), 0);
  const error = s.observed - predicted;
  const norm = s.x.reduce((sum, x) => sum + x * x, 0);
  const rate = error > 0 ? 1 : DOWN_RATE;
  const next = r.map((ratio, i) => clamp(ratio + (rate * error * (s.x[i] ?? 0)) / norm));
  return { text: next[0] ?? 1, tool: next[1] ?? 1, image: next[2] ?? 1, observations: calibration.observations + 1 };
}

interface Sample {
  readonly observed: number;
  /** Baton's counts in tokens: text, tool output, images at `IMAGE_TOKENS` each. */
  readonly x: readonly [number, number, number];
}

/** A usable sample: positive counts and a positive report (a context that shrank or a zero report teaches nothing). */
function sample(o: Observation): Sample | null {
  const x = [o.counts.text, o.counts.tool, o.counts.images * IMAGE_TOKENS] as const;
  if (x.some((v) => v < 0) || weight(x) <= 0 || o.observed <= 0) return null;
  return { observed: o.observed, x };
}

const weight = (x: readonly number[]): number => x.reduce((a, b) => a + b, 0);
