/**
 * Timers are effects (ARCHITECTURE "Actors and effects"): a machine asks for `timer.start` / `timer.cancel`, and the
 * firing re-enters the session as a logged `timer.fired` input, so a replay needs no clock.
 */
export class EffectTimers {
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #fire: (sessionId: string, timerId: string) => void;

  constructor(fire: (sessionId: string, timerId: string) => void) {
    this.#fire = fire;
  }

  start(sessionId: string, timerId: string, ms: number): void {
    this.cancel(timerId);
    const handle = setTimeout(() => {
      this.#timers.delete(timerId);
      this.#fire(sessionId, timerId);
    }, ms);
    this.#timers.set(timerId, handle);
  }

  cancel(timerId: string): void {
    const handle = this.#timers.get(timerId);
    if (handle !== undefined) clearTimeout(handle);
    this.#timers.delete(timerId);
  }

  /** Cancels every pending timer (on shutdown). */
  clear(): void {
    for (const handle of this.#timers.values()) clearTimeout(handle);
    this.#timers.clear();
  }
}
