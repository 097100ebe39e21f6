import type { Clock, TimerHandle } from '../time/clock.ts';

/** When sessions leave memory. */
export interface Residency {
  /** A session nobody used for this long leaves memory (default 10 min). */
  readonly idleMs: number;
  /** Most sessions kept in memory; past it the least recently used idle ones leave (default: no limit). */
  readonly maxResident: number;
  /** A snapshot of a session's state is written every this many inputs (and when it leaves memory). */
  readonly snapshotEvery: number;
}

export const DEFAULT_RESIDENCY: Residency = { idleMs: 600_000, maxResident: Number.POSITIVE_INFINITY, snapshotEvery: 500 };

export interface ResidentSessionsOptions<S> {
  readonly clock: Clock;
  readonly residency: Residency;
  /** Whether a session may leave memory now (nothing of it under way). */
  readonly idle: (session: S) => boolean;
  /** Takes a session out of memory (writes what it must first); called only for sessions `idle` accepted. */
  readonly evict: (sessionId: string) => void;
}

/**
 * The sessions in memory, least recently used first, and when they leave it: past `maxResident` the least recently used
 * idle ones (`makeRoom`), and every so often those unused for `idleMs` (the sweep, started by `startSweep`).
 */
export class ResidentSessions<S extends { readonly sessionId: string; lastUsedAt: number }> {
  readonly #o: ResidentSessionsOptions<S>;
  readonly #sessions = new Map<string, S>();
  #sweep: TimerHandle | null = null;

  constructor(options: ResidentSessionsOptions<S>) {
    this.#o = options;
  }

  get size(): number {
    return this.#sessions.size;
  }

  get(sessionId: string): S | undefined {
    return this.#sessions.get(sessionId);
  }

  values(): IterableIterator<S> {
    return this.#sessions.values();
  }

  keys(): IterableIterator<string> {
    return this.#sessions.keys();
  }

  /** Adds a session just loaded (the most recently used). */
  add(session: S): void {
    this.#sessions.set(session.sessionId, session);
  }

  delete(sessionId: string): boolean {
    return this.#sessions.delete(sessionId);
  }

  /** Marks a session most recently used. */
  touch(session: S): S {
    session.lastUsedAt = this.#o.clock.now();
    this.#sessions.delete(session.sessionId);
    this.#sessions.set(session.sessionId, session);
    return session;
  }

  /** Past `maxResident`, the least recently used idle sessions leave memory (never `keep`, just loaded). */
  makeRoom(keep: string): void {
    let excess = this.#sessions.size - this.#o.residency.maxResident;
    for (const s of this.#sessions.values()) {
      if (excess <= 0) return;
      if (s.sessionId === keep || !this.#o.idle(s)) continue;
      excess--;
      this.#o.evict(s.sessionId);
    }
  }

  /** Every so often, sessions unused for `idleMs` leave memory. */
  startSweep(): void {
    const { idleMs } = this.#o.residency;
    const every = Math.max(10, Math.min(idleMs / 2, 60_000));
    this.#sweep = this.#o.clock.setTimeout(() => {
      const now = this.#o.clock.now();
      for (const s of [...this.#sessions.values()]) if (now - s.lastUsedAt >= idleMs && this.#o.idle(s)) this.#o.evict(s.sessionId);
      this.startSweep();
    }, every);
  }

  /** Stops the sweep (on shutdown). */
  stopSweep(): void {
    if (this.#sweep !== null) this.#o.clock.clearTimeout(this.#sweep);
    this.#sweep = null;
  }
}
