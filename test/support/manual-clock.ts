import type { Clock } from '@baton/runtime';

type TimerHandle = ReturnType<Clock['setTimeout']>;

interface Pending {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/**
 * A `Clock` whose time moves only when the test says so: `advance(ms)` runs every timer that falls due, in deadline
 * order, with `now()` at each timer's deadline (timers started meanwhile run too when they fall due). Time starts at
 * the real time, so records stay plausible next to the worker threads' real clocks.
 */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  readonly #timers = new Map<number, Pending>();

  constructor(start: number = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.set(id, { id, at: this.#now + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle.id as number);
  }

  /** Moves time on by `ms`, running the timers that fall due. */
  advance(ms: number): void {
    const until = this.#now + ms;
    for (;;) {
      let next: Pending | undefined;
      for (const t of this.#timers.values()) if (t.at <= until && (next === undefined || t.at < next.at || (t.at === next.at && t.id < next.id))) next = t;
      if (next === undefined) break;
      this.#timers.delete(next.id);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = until;
  }
}
