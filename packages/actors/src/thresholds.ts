/**
 * Threshold ladders. All numbers are provider tokens of the main slice.
 */

/** Model limits as declared by the agent at `open`. */
export interface ModelLimits {
  readonly contextWindow: number;
  readonly maxOutputTokens?: number;
  readonly inputLimit?: number;
}

/** Default compaction reserve cap (reference `COMPACTION_BUDGET`). */
export const COMPACTION_BUFFER = 33_000;
/** Output reserve cap (reference `OUTPUT_CAP`). */
export const OUTPUT_CAP = 20_000;
/** Default distance kept between the highest rung and the usable window. */
export const CHECKPOINT_RESERVED = 13_000;
/** Assumed `max_output_tokens` when the agent does not declare one. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_000;
/**
 * Below about 160 000 tokens the fixed reserves would eat most of the window (a 64 000-token model kept 12 000, a
 * 32 000-token one nothing), so each reserve is also at most this share of the window: the output reserve 12.5 %, the
 * compaction reserve 20 %. From 160 000 tokens up the fixed caps are the smaller ones and nothing changes.
 */
export const OUTPUT_SHARE = 0.125;
export const COMPACTION_SHARE = 0.2;
/**
 * Share of the usable window kept between the highest rung and the usable window, at most `CHECKPOINT_RESERVED`: from a
 * usable window of 25 000 up that is the fixed 13 000; below it a small window keeps about half of itself for the
 * writer to finish in before the window fills.
 */
export const RESERVED_SHARE = 0.52;
/** Smallest usable window that gets a default ladder. */
export const MIN_LADDER_USABLE = 8_000;

export class ThresholdError extends Error {
  readonly code = 'invalid_threshold';
  constructor(message: string) {
    super(message);
    this.name = 'ThresholdError';
  }
}

/**
 * `context − compaction reserve − output reserve`, with each reserve the smaller of its fixed cap and its share of the
 * window (`OUTPUT_SHARE`, `COMPACTION_SHARE`). The output reserve is 0 when the model publishes an input limit (the
 * input limit already excludes output).
 */
export function usableWindow(model: ModelLimits, compactionReserved?: number): number {
  const maxOut = model.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const base = model.inputLimit ?? model.contextWindow;
  const output = model.inputLimit !== undefined ? 0 : Math.min(maxOut, OUTPUT_CAP, Math.floor(base * OUTPUT_SHARE));
  const compaction = compactionReserved ?? Math.min(COMPACTION_BUFFER, maxOut, Math.floor(base * COMPACTION_SHARE));
  return Math.max(0, base - output - compaction);
}

/**
 * The distance kept between the highest rung and the usable window when the agent sets none: `CHECKPOINT_RESERVED`,
 * or `RESERVED_SHARE` of a usable window too small for it.
 */
export function defaultReserved(usable: number): number {
  return Math.min(CHECKPOINT_RESERVED, Math.floor(usable * RESERVED_SHARE));
}

/**
 * Default ladder percentages for a usable window: none below `MIN_LADDER_USABLE`, 20/40/60/80 % up to 200 000,
 * every 10 % up to 500 000, every 5 % above.
 */
export function defaultLadderPercents(usable: number): number[] {
  if (usable < MIN_LADDER_USABLE) return [];
  const range = (step: number): number[] => Array.from({ length: Math.floor(90 / step) }, (_, i) => (i + 1) * step);
  if (usable <= 200_000) return [20, 40, 60, 80];
  if (usable <= 500_000) return range(10);
  return range(5);
}

/**
 * Parses one threshold: `"N%"` (0 < N ≤ 100, of the usable window, floored), `"100K"`, `"1.5M"` (case-insensitive
 * suffix) or a non-negative integer. Throws `ThresholdError` naming the value.
 */
export function parseQuantity(value: string | number, usable: number): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value <= 0) throw new ThresholdError(`threshold ${value} must be a positive integer`);
    return value;
  }
  const text = value.trim();
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(text);
  if (pct) {
    const n = Number(pct[1]);
    if (!(n > 0 && n <= 100)) throw new ThresholdError(`threshold "${value}": percentage must be in (0, 100]`);
    return Math.floor((usable * n) / 100);
  }
  const qty = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text);
  if (!qty) throw new ThresholdError(`threshold "${value}": expected "N%", "100K", "1.5M" or an integer`);
  const mult = qty[2] === '' ? 1 : qty[2]?.toLowerCase() === 'k' ? 1_000 : 1_000_000;
  const n = Math.floor(Number(qty[1]) * mult);
  if (n <= 0) throw new ThresholdError(`threshold "${value}" must be positive`);
  return n;
}

/**
 * Resolves the ladder: overrides (user order) or the default ladder, then clamps to `usable − reserved`: the first
 * value above the cap becomes the cap, later ones are dropped; the result is sorted and deduplicated.
 * Throws when the cap is not positive but rungs were asked for.
 */
export function resolveThresholds(
  usable: number,
  options: { readonly overrides?: readonly (string | number)[]; readonly reserved?: number } = {},
): number[] {
  const values =
    options.overrides !== undefined
      ? options.overrides.map((v) => parseQuantity(v, usable))
      : defaultLadderPercents(usable).map((p) => Math.floor((usable * p) / 100));
  if (values.length === 0) return [];
  const maxAllowed = usable - (options.reserved ?? CHECKPOINT_RESERVED);
  if (maxAllowed <= 0) {
    throw new ThresholdError(
      `usable window ${usable} minus reserve ${options.reserved ?? CHECKPOINT_RESERVED} leaves no room for thresholds`,
    );
  }
  const out: number[] = [];
  let clamped = false;
  for (const v of values) {
    if (v <= maxAllowed) out.push(v);
    else if (!clamped) {
      out.push(maxAllowed);
      clamped = true;
    }
  }
  return [...new Set(out)].sort((a, b) => a - b);
}
