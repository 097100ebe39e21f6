import { readFile } from 'node:fs/promises';
import type { TailPolicy } from '@baton/actors';
import type { WaitsConfig } from '@baton/runtime';
import { z } from 'zod';

/**
 * The daemon's configuration file (`baton daemon --config <file.json>`). Budgets and rebuild caps are validated by
 * the daemon itself at start-up (sections summing above a total are refused with the key named); the tail policy and
 * the waits here.
 */
const Ms = z.int().nonnegative();

/** `waits` in the file (snake_case, like every key there) → the daemon's `waits` option. */
const WAIT_KEYS = {
  close_ms: 'closeMs',
  rebuild_overflow_ms: 'rebuildOverflowMs',
  rebuild_manual_ms: 'rebuildManualMs',
  rebuild_in_flight_ms: 'rebuildInFlightMs',
  drain_ms: 'drainMs',
  writer_settlement_ms: 'writerSettlementMs',
  stop_settle_ms: 'stopSettleMs',
  decision_flush_ms: 'decisionFlushMs',
  startup_ms: 'startupMs',
  queue_ms: 'queueMs',
} as const satisfies Record<string, keyof WaitsConfig>;

const DaemonConfigSchema = z.strictObject({
  budgets: z.unknown().optional(),
  rebuild_caps: z.unknown().optional(),
  tail: z
    .strictObject({
      min_tokens: z.int().positive(),
      max_tokens: z.int().positive(),
      min_text_messages: z.int().nonnegative(),
    })
    .refine((t) => t.max_tokens >= t.min_tokens, { message: 'max_tokens must be at least min_tokens', path: ['max_tokens'] })
    .optional(),
  fit: z
    .strictObject({ target_share: z.number().gt(0).max(1).optional(), lag_share: z.number().gt(0).max(1).optional(), min_steps: z.int().min(1).max(50).optional() })
    .optional(),
  max_queued_requests: z.int().positive().optional(),
  max_queued_per_session: z.int().positive().optional(),
  waits: z.strictObject(Object.fromEntries(Object.keys(WAIT_KEYS).map((k) => [k, Ms.optional()])) as Record<keyof typeof WAIT_KEYS, z.ZodOptional<typeof Ms>>).optional(),
});

/** The file's top-level keys: the settings of `settings-table.ts` that have one, each `configKey` of its name. */
export const DAEMON_CONFIG_KEYS: readonly string[] = Object.keys(DaemonConfigSchema.shape);

export interface DaemonConfig {
  readonly budgets?: unknown;
  readonly rebuildCaps?: unknown;
  readonly fit?: { targetShare?: number; lagShare?: number; minSteps?: number };
  readonly tail?: TailPolicy;
  readonly waits?: WaitsConfig;
  /** Requests the daemon (`max_queued_requests`) and one session (`max_queued_per_session`) may have queued. */
  readonly requestQueue?: { readonly total?: number; readonly perSession?: number };
}

export class DaemonConfigError extends Error {
  override readonly name = 'DaemonConfigError';
}

/** Reads and validates a configuration file; throws `DaemonConfigError` naming the file and the offending key. */
export async function loadDaemonConfig(path: string): Promise<DaemonConfig> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new DaemonConfigError(`cannot read the configuration ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = DaemonConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue === undefined ? '' : [...issue.path, ...(issue.code === 'unrecognized_keys' ? issue.keys : [])].join('.');
    throw new DaemonConfigError(`invalid configuration ${path}: ${key || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const c = parsed.data;
  return {
    ...(c.budgets !== undefined ? { budgets: c.budgets } : {}),
    ...(c.rebuild_caps !== undefined ? { rebuildCaps: c.rebuild_caps } : {}),
    ...(c.fit !== undefined ? { fit: fitOf(c.fit) } : {}),
    ...(c.tail !== undefined ? { tail: { minTokens: c.tail.min_tokens, maxTokens: c.tail.max_tokens, minTextMessages: c.tail.min_text_messages } } : {}),
    ...(c.waits !== undefined ? { waits: waitsOf(c.waits) } : {}),
    ...(c.max_queued_requests !== undefined || c.max_queued_per_session !== undefined
      ? {
          requestQueue: {
            ...(c.max_queued_requests !== undefined ? { total: c.max_queued_requests } : {}),
            ...(c.max_queued_per_session !== undefined ? { perSession: c.max_queued_per_session } : {}),
          },
        }
      : {}),
  };
}

function waitsOf(file: Partial<Record<keyof typeof WAIT_KEYS, number | undefined>>): WaitsConfig {
  const out: Record<string, number> = {};
  for (const [key, option] of Object.entries(WAIT_KEYS)) {
    const value = file[key as keyof typeof WAIT_KEYS];
    if (value !== undefined) out[option] = value;
  }
  return out;
}

/** `fit` in the file (snake_case) → the daemon's `fit` option. */
function fitOf(fit: { target_share?: number | undefined; lag_share?: number | undefined; min_steps?: number | undefined }): { targetShare?: number; lagShare?: number; minSteps?: number } {
  return {
    ...(fit.target_share !== undefined ? { targetShare: fit.target_share } : {}),
    ...(fit.lag_share !== undefined ? { lagShare: fit.lag_share } : {}),
    ...(fit.min_steps !== undefined ? { minSteps: fit.min_steps } : {}),
  };
}
