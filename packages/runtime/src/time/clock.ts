/** A timer started through a `Clock`; opaque to its users. */
export interface TimerHandle {
  readonly id: unknown;
}

/**
 * Time as a port: the daemon, the actor hosts, writer runs and the decision queue read the time and start timers
 * only through a `Clock`, so tests can drive waits with their own clock instead of waiting in real time.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms`. A pending timer never keeps the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process's real clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const id = setTimeout(fn, ms);
    id.unref();
    return { id };
  },
  clearTimeout(handle) {
    clearTimeout(handle.id as ReturnType<typeof setTimeout>);
  },
};
