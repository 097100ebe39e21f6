import type { Clock } from '../time/clock.ts';

/** Notifies waiters after every fold, so they can re-check a condition on the sessions' state. */
export class FoldSignal {
  readonly #listeners = new Set<() => void>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * Resolves with the first non-null result of `check` (tried now and after every fold), or with `onTimeout` after
   * `timeoutMs` on the clock.
   */
  waitFor<T>(check: () => T | null, timeoutMs: number, onTimeout: T): Promise<T> {
    const now = check();
    if (now !== null) return Promise.resolve(now);
    return new Promise<T>((resolve) => {
      const done = (value: T): void => {
        this.#clock.clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(value);
      };
      const listener = (): void => {
        const value = check();
        if (value !== null) done(value);
      };
      const timer = this.#clock.setTimeout(() => done(onTimeout), timeoutMs);
      this.#listeners.add(listener);
    });
  }
}
