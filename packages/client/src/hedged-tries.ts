import { TransportError } from './transport/transport-error.ts';

/** The most tries one round of `hedgedTries` sends at once. */
export const MAX_BURST = 4;

/** How `hedgedTries` sends a request that is safe to repeat. */
export interface HedgeOptions {
  /** After this long without an answer another try is sent; earlier tries keep waiting for theirs. */
  readonly hedgeMs: number;
  /** How long each try waits for its answer at most (cut to what is left before `deadline`). */
  readonly tryTimeoutMs: number;
  /** `performance.now()` after which no try is sent and the last error is thrown once no try is pending. */
  readonly deadline: number;
  /** First wait after a try was refused (doubling up to `maxDelayMs`) before the next. */
  readonly delayMs: number;
  readonly maxDelayMs: number;
  /** Whether a try's failure may be followed by another try (else it is thrown at once). */
  readonly mayRetry: (err: unknown) => boolean;
}

/**
 * Sends a request that is safe to repeat until one try is answered, without giving up on the tries already sent. A
 * request that goes to a queue group reaches one member at random; a member that is paused (SIGSTOP, a GC pause, a
 * frozen VM) takes it and answers nothing until it runs again. Each `hedgeMs` without an answer, more tries are sent
 * while the earlier ones keep waiting — one, then two, then `MAX_BURST` at a time — so the chance that every try so
 * far reached the paused member falls fast (with one member of two paused: 1/2 after the first, 1/8 after the second
 * round, 1/128 after the third), and a try that a live member holds on purpose (it waits out a lapsed lease before
 * it answers) is not thrown away. A try refused at once (no responders, `unavailable`) is followed by one more after
 * a growing delay instead. The rounds cost live members extra tries only while answers are late.
 *
 * Resolves with the first answer and how many tries were sent; rejects with the first failure that may not be
 * retried, or with the last failure once the deadline passed and no try is pending.
 */
export function hedgedTries<T>(send: (timeoutMs: number) => Promise<T>, o: HedgeOptions): Promise<{ readonly value: T; readonly attempts: number }> {
  return new Promise((resolve, reject) => {
    let attempts = 0;
    let pending = 0;
    let done = false;
    let delay = o.delayMs;
    let lastError: Error = new TransportError('timeout', 'no try of the request could be sent before the deadline');
    let timer: ReturnType<typeof setTimeout> | undefined;

    const finish = (settle: () => void): void => {
      done = true;
      clearTimeout(timer);
      settle();
    };
    const schedule = (ms: number, next: () => void): void => {
      clearTimeout(timer);
      timer = setTimeout(next, ms);
    };
    // Nothing more to wait for: no try pending and none to come before the deadline.
    const giveUpIfIdle = (nextInMs: number): void => {
      if (pending === 0 && performance.now() + nextInMs >= o.deadline) finish(() => reject(lastError));
    };

    let burst = 1;
    // A round of the hedge timer: `burst` tries, twice as many next time (up to MAX_BURST).
    const round = (): void => {
      const n = burst;
      burst = Math.min(MAX_BURST, burst * 2);
      for (let i = 0; i < n && !done; i++) launch();
      if (!done && performance.now() < o.deadline) schedule(o.hedgeMs, round);
    };

    function launch(): void {
      if (done) return;
      const left = o.deadline - performance.now();
      if (left <= 0) {
        clearTimeout(timer);
        giveUpIfIdle(0);
        return;
      }
      attempts++;
      pending++;
      const attempt = attempts;
      send(Math.max(1, Math.min(o.tryTimeoutMs, left))).then(
        (value) => {
          pending--;
          if (!done) finish(() => resolve({ value, attempts: attempt }));
        },
        (thrown: unknown) => {
          pending--;
          if (done) return;
          const err = thrown instanceof Error ? thrown : new Error(String(thrown));
          if (!o.mayRetry(err)) {
            finish(() => reject(err));
            return;
          }
          lastError = err;
          if (err instanceof TransportError && err.code === 'timeout') {
            // This try waited its whole time; later ones were sent meanwhile (`hedgeMs` is shorter).
            giveUpIfIdle(0);
            return;
          }
          // Refused at once: no daemon can take it yet. The next try after a growing delay.
          giveUpIfIdle(delay);
          if (done) return;
          schedule(delay, () => {
            launch();
            if (!done && performance.now() < o.deadline) schedule(o.hedgeMs, round);
          });
          delay = Math.min(o.maxDelayMs, delay * 2);
        },
      );
    }

    round();
  });
}
