import type { Clock } from '../time/clock.ts';
import type { JoinFailure } from './join-failure.ts';

export interface RetryJoinOptions<T> {
  /** One attempt to join; its failure is named by `classify` and tried again after a delay. */
  readonly attempt: () => Promise<T>;
  readonly classify: (err: unknown) => JoinFailure;
  /** Told of every failed attempt (1-based count) and the delay before the next one. */
  readonly onFailure: (failure: JoinFailure, attempts: number, retryInMs: number) => void;
  /** Aborting ends the wait at once: `retryJoin` resolves null without waiting for an attempt in flight. */
  readonly signal: AbortSignal;
  /** What an attempt still in flight when the wait was aborted is given if it succeeds later (to undo it). */
  readonly discard: (joined: T) => Promise<void>;
  /** Delay before the second attempt; doubles up to `maxDelayMs`. */
  readonly delayMs: number;
  readonly maxDelayMs: number;
  /** The timers the delays run on. */
  readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
}

type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly err: unknown };

/**
 * Tries to join until an attempt succeeds, with a doubling delay between attempts, for as long as it takes (the
 * cluster may come up after the daemon, or be fixed by its operator): every failure is told with its cause. Resolves
 * null as soon as `signal` aborts, whatever it was waiting for.
 */
export async function retryJoin<T>(o: RetryJoinOptions<T>): Promise<T | null> {
  const aborted = new Promise<null>((resolve) => {
    if (o.signal.aborted) resolve(null);
    else o.signal.addEventListener('abort', () => resolve(null), { once: true });
  });
  let delay = o.delayMs;
  for (let attempts = 1; ; attempts++) {
    if (o.signal.aborted) return null;
    const running = o.attempt().then(
      (value): Outcome<T> => ({ ok: true, value }),
      (err: unknown): Outcome<T> => ({ ok: false, err }),
    );
    const outcome = await Promise.race([running, aborted]);
    if (outcome === null) {
      void running.then((late) => (late.ok ? o.discard(late.value) : undefined)).catch(() => {});
      return null;
    }
    if (outcome.ok) {
      if (!o.signal.aborted) return outcome.value;
      await o.discard(outcome.value).catch(() => {});
      return null;
    }
    o.onFailure(o.classify(outcome.err), attempts, delay);
    let timer: ReturnType<Clock['setTimeout']> | null = null;
    const slept = new Promise<true>((resolve) => {
      timer = o.clock.setTimeout(() => resolve(true), delay);
    });
    const woke = await Promise.race([slept, aborted]);
    if (timer !== null) o.clock.clearTimeout(timer);
    if (woke === null) return null;
    delay = Math.min(o.maxDelayMs, delay * 2);
  }
}
