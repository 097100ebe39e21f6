import { z } from 'zod';
import { MemoryStoreError } from '../memory-errors.ts';

/**
 * Token caps of the rebuilt context. Every cap is in real tokens — including the
 * tasks ledger, which a cap in characters would misjudge. A cap bounds its whole section, header
 * line included; a cap of 0 leaves the section out.
 */

/** Keys of {@link RebuildCaps}, in the order of the rebuilt context. */
export const REBUILD_CAP_KEYS = [
  'tasks_ledger',
  'checkpoint',
  'uncovered',
  'actor_ledger',
  'recent_user',
  'recent_user_per_msg',
  'memory',
  'global',
  'notes',
  'memory_titles',
] as const;

/** Name of one rebuild cap. */
export type RebuildCapKey = (typeof REBUILD_CAP_KEYS)[number];

/** Resolved caps of the rebuilt context, in tokens. */
export type RebuildCaps = Readonly<Record<RebuildCapKey, number>>;

/** Default caps, all in tokens. */
export const DEFAULT_REBUILD_CAPS: RebuildCaps = Object.freeze({
  /** checkpoint.md, section-aware. */
  checkpoint: 11_000,
  /** The steps after the checkpoint that a fitted rebuild took out of the context, one line each. */
  uncovered: 4_000,
  /** Project MEMORY.md, section-aware. */
  memory: 10_000,
  /** notes.md, plain budgeted read. */
  notes: 6_000,
  /** Global MEMORY.md, section-aware. */
  global: 6_000,
  /** Recent user messages together; 0 disables the section. */
  recent_user: 16_000,
  /** One recent user message (its text; longer ones keep head and tail). */
  recent_user_per_msg: 2_000,
  /** The tasks ledger. */
  tasks_ledger: 2_000,
  /** The active writers of this session. */
  actor_ledger: 500,
  /** The memory keys index. */
  memory_titles: 500,
});

const tokens = z.number().int().nonnegative();

/**
 * Cap overrides (the `rebuild_caps` key of the daemon options): any subset of {@link RebuildCapKey}, each a
 * non-negative integer. Unknown keys are refused.
 */
export const RebuildCapsConfigSchema = z.strictObject(
  Object.fromEntries(REBUILD_CAP_KEYS.map((key) => [key, tokens.optional()])) as {
    [K in RebuildCapKey]: z.ZodOptional<typeof tokens>;
  },
);

/** Cap overrides as configured; every field is optional. */
export type RebuildCapsConfig = z.input<typeof RebuildCapsConfigSchema>;

/**
 * Merges `overrides` onto {@link DEFAULT_REBUILD_CAPS}. Called once at start-up; the result is frozen.
 *
 * @throws MemoryStoreError `invalid_config` naming the offending key (for instance `rebuild_caps.notes`): a value
 *   that is negative, not an integer or not a number, or a key that is not a cap.
 */
export function resolveRebuildCaps(overrides: unknown = {}): RebuildCaps {
  const parsed = RebuildCapsConfigSchema.safeParse(overrides ?? {});
  if (!parsed.success) {
    const keyOf = (issue: z.core.$ZodIssue): string => {
      const unknown = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
      return ['rebuild_caps', ...issue.path.map(String), ...(unknown === undefined ? [] : [unknown])].join('.');
    };
    const issue = parsed.error.issues[0];
    const key = issue === undefined ? 'rebuild_caps' : keyOf(issue);
    throw new MemoryStoreError('invalid_config', `${key}: ${issue?.message ?? 'invalid rebuild caps'}`, {
      key,
      issues: parsed.error.issues.map((i) => ({ path: keyOf(i), message: i.message })),
    });
  }
  const caps: Record<RebuildCapKey, number> = { ...DEFAULT_REBUILD_CAPS };
  for (const key of REBUILD_CAP_KEYS) {
    const value = parsed.data[key];
    if (value !== undefined) caps[key] = value;
  }
  return Object.freeze(caps);
}

/**
 * `caps` with every cap multiplied by `factor` (0 < factor ≤ 1) and floored: a rebuilt context that would not leave
 * room for the conversation in a small window is rendered again with smaller caps.
 */
export function scaleRebuildCaps(caps: RebuildCaps, factor: number): RebuildCaps {
  if (factor >= 1) return caps;
  const scaled: Record<RebuildCapKey, number> = { ...caps };
  for (const key of REBUILD_CAP_KEYS) scaled[key] = Math.floor(caps[key] * Math.max(0, factor));
  return Object.freeze(scaled);
}
