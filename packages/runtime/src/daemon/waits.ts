import { DEFAULT_WAITS } from '@baton/protocol';
import { z } from 'zod';

const Ms = z.number().int().nonnegative();

/** Every wait of the daemon, in milliseconds; `baton daemon --config` may set any of them (`"waits": { … }`). */
export const WaitsConfigSchema = z.strictObject({
  rebuildOverflowMs: Ms.optional(),
  rebuildManualMs: Ms.optional(),
  rebuildInFlightMs: Ms.optional(),
  closeMs: Ms.optional(),
  drainMs: Ms.optional(),
  /** `waitForWriterSettlement`: how long a caller waits for the running writer before `timeout`. */
  writerSettlementMs: Ms.optional(),
  /** Shutdown: how long cancelled writers get to log their settlement before the pool closes. */
  stopSettleMs: Ms.optional(),
  /** How long an idle session's decision records wait for its next input before they are written on their own. */
  decisionFlushMs: Ms.optional(),
  /** How long a request waits for start-up repair before it gets `unavailable`. */
  startupMs: Ms.optional(),
  /** How long a request may wait for its turn in its session's queue before it gets `unavailable` (reason `timeout`). */
  queueMs: Ms.optional(),
});
export type WaitsConfig = z.input<typeof WaitsConfigSchema>;
export type Waits = { readonly [K in keyof z.output<typeof WaitsConfigSchema>]-?: number };

export const DEFAULT_DAEMON_WAITS: Waits = {
  ...DEFAULT_WAITS,
  writerSettlementMs: 300_000,
  stopSettleMs: 5_000,
  decisionFlushMs: 50,
  startupMs: 30_000,
  queueMs: 30_000,
};

/** Validates a waits configuration and fills in the defaults; throws a `TypeError` naming the offending key. */
export function resolveWaits(config: unknown = {}): Waits {
  const parsed = WaitsConfigSchema.safeParse(config ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = ['waits', ...(issue?.path ?? []).map(String), ...(issue?.code === 'unrecognized_keys' ? issue.keys : [])].join('.');
    throw new TypeError(`${key}: ${issue?.message ?? 'invalid waits'}`);
  }
  const out: Record<string, number> = { ...DEFAULT_DAEMON_WAITS };
  for (const [key, value] of Object.entries(parsed.data)) if (value !== undefined) out[key] = value;
  return out as Waits;
}
