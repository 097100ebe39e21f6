import type { Clock, TimerHandle } from '../time/clock.ts';

/**
 * Timers are effects: a machine asks for `timer.start` / `timer.cancel`, and the firing re-enters the session as a
 * logged `timer.fired` input, so a replay needs no clock. Timers run on the injected `Clock`.
 */
export class EffectTimers {
  readonly #timers = new Map<string, TimerHandle>();
  readonly #clock: Clock;
  readonly #fire: (sessionId: string, timerId: string) => void;

  constructor(clock: Clock, fire: (sessionId: string, timerId: string) => void) {
    this.#clock = clock;
    this.#fire = fire;
  }

  start(sessionId: string, timerId: string, ms: number): void {
    this.cancel(timerId);
    const handle = this.#clock.setTimeout(() => {
      this.#timers.delete(timerId);
      this.#fire(sessionId, timerId);
    }, ms);
    this.#timers.set(timerId, handle);
  }

  cancel(timerId: string): void {
    const handle = this.#timers.get(timerId);
    if (handle !== undefined) this.#clock.clearTimeout(handle);
    this.#timers.delete(timerId);
  }

  /** Cancels every pending timer (on shutdown). */
  clear(): void {
    for (const handle of this.#timers.values()) this.#clock.clearTimeout(handle);
    this.#timers.clear();
  }
}
