import { ClusterError } from './cluster-error.ts';
import { isTransient } from './jetstream-errors.ts';

/** How long an operation keeps retrying transient JetStream failures, and how it waits between attempts. */
export interface RetryPolicy {
  /** Give up (`ClusterError('unavailable')`) after this long. */
  readonly deadlineMs: number;
  /** Wait before the first retry; doubles up to `maxDelayMs`. */
  readonly delayMs: number;
  readonly maxDelayMs: number;
  /** Milliseconds on a monotonic clock. */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries for up to 30 s: a leader election on 2.9.10 takes 4–9 s, and a request may time out on both sides of it. */
export const DEFAULT_RETRY: RetryPolicy = { deadlineMs: 30_000, delayMs: 100, maxDelayMs: 1_000, now: () => performance.now(), sleep: realSleep };

/**
 * Runs `attempt` until it succeeds, retrying transient failures (timeouts, no leader yet) with the same inputs — the
 * caller makes each attempt idempotent (same message id, create-only key). Other errors end it at once.
 */
export async function withRetry<T>(what: string, attempt: () => Promise<T>, policy: RetryPolicy = DEFAULT_RETRY, onFailure?: (err: unknown) => void): Promise<T> {
  const deadline = policy.now() + policy.deadlineMs;
  let delay = policy.delayMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (!isTransient(err)) throw err;
      onFailure?.(err);
      if (policy.now() + delay > deadline) {
        throw new ClusterError('unavailable', `${what}: JetStream did not answer within ${policy.deadlineMs} ms`, { what }, { cause: err });
      }
      await policy.sleep(delay);
      delay = Math.min(policy.maxDelayMs, delay * 2);
    }
  }
}
