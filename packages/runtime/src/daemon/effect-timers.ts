import type { Clock, TimerHandle } from '../time/clock.ts';

/**
 * Timers are effects: a machine asks for `timer.start` / `timer.cancel`, and the firing re-enters the session as a
 * logged `timer.fired` input, so a replay needs no clock. Timers run on the injected `Clock`.
 */
export class EffectTimers {
  readonly #timers = new Map<string, { readonly sessionId: string; readonly handle: TimerHandle }>();
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
    this.#timers.set(timerId, { sessionId, handle });
  }

  cancel(timerId: string): void {
    const timer = this.#timers.get(timerId);
    if (timer !== undefined) this.#clock.clearTimeout(timer.handle);
    this.#timers.delete(timerId);
  }

  /** Whether a timer of `sessionId` is pending (such a session must stay in memory to receive it). */
  pending(sessionId: string): boolean {
    for (const timer of this.#timers.values()) if (timer.sessionId === sessionId) return true;
    return false;
  }

  /** Cancels the pending timers of one session (it left this daemon). */
  cancelSession(sessionId: string): void {
    for (const [timerId, timer] of this.#timers) {
      if (timer.sessionId !== sessionId) continue;
      this.#clock.clearTimeout(timer.handle);
      this.#timers.delete(timerId);
    }
  }

  /** Cancels every pending timer (on shutdown). */
  clear(): void {
    for (const timer of this.#timers.values()) this.#clock.clearTimeout(timer.handle);
    this.#timers.clear();
  }
}
