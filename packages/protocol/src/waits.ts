/**
 * The daemon's default waits, in milliseconds. They are part of the contract: a client sizes its request timeouts
 * from them (a `rebuild` may wait for a writer, a `close` for the running writer), and a daemon may be configured
 * with other values (`baton daemon --config`).
 */
export const DEFAULT_WAITS = {
  /** `rebuild` with reason `overflow` and no usable checkpoint: how long a writer is awaited. */
  rebuildOverflowMs: 180_000,
  /** `rebuild` with reason `manual` and no usable checkpoint. */
  rebuildManualMs: 300_000,
  /** `rebuild` with a usable checkpoint while a writer runs: how long that writer is awaited before rendering. */
  rebuildInFlightMs: 30_000,
  /** `close` while a writer runs: how long it is awaited before it is cancelled. */
  closeMs: 120_000,
  /** `runtime.drain`: how long running writers are awaited. */
  drainMs: 120_000,
} as const;

export type WaitName = keyof typeof DEFAULT_WAITS;
