/**
 * How many tokens the provider counts for what Baton counts. Baton counts every message with its own tokenizer
 * (o200k); a provider may tokenise otherwise (Anthropic, Gemini, local models), counts images by their size rather
 * than their bytes, and adds some tokens for every message (its role, its framing, a tool call's structure). Each reply
 * reports what the provider counted for the request it answered, so the session learns its model of that count:
 *
 *   provider ≈ text × r_text + tool output × r_tool + images × 1 000 × r_image + messages × c_message
 *
 * by recursive least squares over the reports (with a slow forgetting, so a model that changes is followed), from the
 * change between two requests of one context when it can (the new content alone: a tool output counted three times as
 * heavy moves r_tool and leaves r_text where it was) and from a whole request otherwise. Every fitting decision counts
 * with it. The estimate is part of the session machine's context, computed from logged inputs only, so a replay learns
 * exactly the same one.
 */

/** Baton's own count of one image (a provider counts an image by its size, typically 500–2 000 tokens). */
export const IMAGE_TOKENS = 1_000;

/** Bounds of a ratio: a provider never counts a tenth of what Baton does, nor ten times as much. */
export const MIN_RATIO = 0.1;
export const MAX_RATIO = 10;
/** Most tokens a provider adds for one message beyond its content. */
export const MAX_PER_MESSAGE = 200;

/** How much older reports weigh against the newest (per report). */
const FORGETTING = 0.98;
/** Prior uncertainty of each parameter (variance, in its own unit): ratios near 1, a per-message count near 0. */
const PRIOR_VARIANCE = [1, 1, 1, 400] as const;

/** What Baton counted, by kind: tokens of text, tokens of tool output, images, and messages. */
export interface ContentCounts {
  readonly text: number;
  readonly tool: number;
  readonly images: number;
  /** How many messages (absent: none). */
  readonly messages?: number | undefined;
}

export const NO_CONTENT: ContentCounts = { text: 0, tool: 0, images: 0, messages: 0 };

/**
 * Provider tokens per Baton token, per kind (per `IMAGE_TOKENS` for images), provider tokens per message, how many
 * reports taught them, and the estimate's covariance (row-major 4×4, absent until the first report).
 */
export interface Calibration {
  readonly text: number;
  readonly tool: number;
  readonly image: number;
  readonly perMessage?: number | undefined;
  readonly observations: number;
  readonly covariance?: readonly number[] | undefined;
}

export const UNCALIBRATED: Calibration = { text: 1, tool: 1, image: 1, perMessage: 0, observations: 0 };

/** One reported request: what the provider counted, and what Baton counted of the same request. */
export interface Observation {
  readonly observed: number;
  readonly counts: ContentCounts;
}

export function addCounts(a: ContentCounts, b: ContentCounts): ContentCounts {
  return { text: a.text + b.text, tool: a.tool + b.tool, images: a.images + b.images, messages: (a.messages ?? 0) + (b.messages ?? 0) };
}

function minus(a: ContentCounts, b: ContentCounts): ContentCounts {
  return { text: a.text - b.text, tool: a.tool - b.tool, images: a.images - b.images, messages: (a.messages ?? 0) - (b.messages ?? 0) };
}

/** What a message counts as: a tool result's tokens are tool output, anyone else's text; its images apart; one message. */
export function countsOfMessage(m: { readonly role: string; readonly tokens: number; readonly images?: number | undefined }): ContentCounts {
  const images = m.images ?? 0;
  return m.role === 'tool' ? { text: 0, tool: m.tokens, images, messages: 1 } : { text: m.tokens, tool: 0, images, messages: 1 };
}

const features = (c: ContentCounts): [number, number, number, number] => [c.text, c.tool, c.images * IMAGE_TOKENS, c.messages ?? 0];
const parameters = (c: Calibration): [number, number, number, number] => [c.text, c.tool, c.image, c.perMessage ?? 0];

/** The provider's count of `counts`, by the calibration (rounded up). */
export function calibratedTokens(calibration: Calibration, counts: ContentCounts): number {
  const x = features(counts);
  const theta = parameters(calibration);
  return Math.ceil(x.reduce((sum, v, i) => sum + v * (theta[i] ?? 0), 0));
}

const clampRatio = (r: number): number => Math.min(MAX_RATIO, Math.max(MIN_RATIO, r));

/**
 * The calibration after one reply's report. With the previous report of the same context (`previous`), the change
 * between the two requests is the sample (the new content alone); otherwise the whole request is. One step of
 * recursive least squares with forgetting, then the ratios are kept within their bounds. A sample with nothing in it,
 * or a context that shrank, teaches nothing.
 */
export function observe(calibration: Calibration, now: Observation, previous: Observation | null): Calibration {
  const change = previous === null ? null : sample({ observed: now.observed - previous.observed, counts: minus(now.counts, previous.counts) });
  const s = change ?? sample(now);
  if (s === null) return calibration;
  const theta = parameters(calibration);
  const p = calibration.covariance !== undefined && calibration.covariance.length === 16 ? [...calibration.covariance] : priorCovariance();
  // k = P x / (λ + xᵀ P x); θ += k (y − xᵀ θ); P = (P − k xᵀ P) / λ
  const px = [0, 1, 2, 3].map((i) => s.x.reduce((sum, xj, j) => sum + (p[i * 4 + j] ?? 0) * xj, 0));
  const denominator = FORGETTING + s.x.reduce((sum, xi, i) => sum + xi * (px[i] ?? 0), 0);
  const gain = px.map((v) => v / denominator);
  const error = s.observed - s.x.reduce((sum, xi, i) => sum + xi * (theta[i] ?? 0), 0);
  const next = theta.map((t, i) => t + (gain[i] ?? 0) * error);
  const updated: number[] = [];
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) updated.push(((p[i * 4 + j] ?? 0) - (gain[i] ?? 0) * (px[j] ?? 0)) / FORGETTING);
  }
  // Kept symmetric (rounding would otherwise drift it).
  for (let i = 0; i < 4; i++) {
    for (let j = i + 1; j < 4; j++) {
      const mean = ((updated[i * 4 + j] ?? 0) + (updated[j * 4 + i] ?? 0)) / 2;
      updated[i * 4 + j] = mean;
      updated[j * 4 + i] = mean;
    }
  }
  return {
    text: clampRatio(next[0] ?? 1),
    tool: clampRatio(next[1] ?? 1),
    image: clampRatio(next[2] ?? 1),
    perMessage: Math.min(MAX_PER_MESSAGE, Math.max(0, next[3] ?? 0)),
    observations: calibration.observations + 1,
    covariance: updated,
  };
}

function priorCovariance(): number[] {
  const p = new Array<number>(16).fill(0);
  PRIOR_VARIANCE.forEach((v, i) => (p[i * 5] = v));
  return p;
}

interface Sample {
  readonly observed: number;
  /** Baton's counts: text tokens, tool-output tokens, images at `IMAGE_TOKENS` each, messages. */
  readonly x: readonly [number, number, number, number];
}

/** A usable sample: no negative count, some content, a positive report. */
function sample(o: Observation): Sample | null {
  const x = features(o.counts);
  if (x.some((v) => v < 0) || x[0] + x[1] + x[2] <= 0 || o.observed <= 0) return null;
  return { observed: o.observed, x };
}
