/** What a standby knows of one daemon's heartbeat, on its own monotonic clock. */
interface Seen {
  /** Newest heartbeat revision seen. */
  revision: number;
  /** When that revision was first seen (monotonic ms), shifted forward by every pause. */
  since: number;
  /** The daemon deleted its heartbeat key: it left and holds nothing any more. */
  gone: boolean;
}

/** One daemon as `LeaseJudge.view` reports it. */
export interface DaemonView {
  readonly daemonId: string;
  /** How long its heartbeat has not changed, in ms of this daemon's clock (pauses excluded). */
  readonly ageMs: number;
  readonly stale: boolean;
  readonly gone: boolean;
}

/**
 * Judges whether other daemons are alive from their heartbeats, on this daemon's own monotonic clock: no clock
 * synchronisation between hosts is assumed, only that clocks advance at about the same rate. A daemon is stale once
 * its heartbeat revision has not changed for `ttlMs` of this daemon's time; a daemon that deleted its heartbeat left
 * and is stale at once; one never heard of counts from the moment it is first asked about (never stale sooner).
 *
 * While this daemon's own KV operations fail (`kvFailed`), it cannot tell a dead owner from a partition of its own,
 * so the clock of every judgement stops: nothing becomes stale during the pause, and `kvOk` resumes the countdowns
 * where they were. Pure: the caller passes the time.
 */
export class LeaseJudge {
  readonly ttlMs: number;
  readonly #seen = new Map<string, Seen>();
  #pausedAt: number | null = null;

  constructor(ttlMs: number) {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`lease TTL must be a positive number of ms, got ${String(ttlMs)}`);
    this.ttlMs = ttlMs;
  }

  /** A heartbeat of `daemonId` at `revision` was seen at `now`. Older or repeated revisions change nothing. */
  observe(daemonId: string, revision: number, now: number): void {
    const s = this.#seen.get(daemonId);
    if (s !== undefined && revision <= s.revision) return;
    this.#seen.set(daemonId, { revision, since: this.#pausedAt ?? now, gone: false });
  }

  /** `daemonId` deleted its heartbeat at `revision` (a graceful leave): its sessions may be claimed at once. */
  left(daemonId: string, revision: number): void {
    const s = this.#seen.get(daemonId);
    if (s !== undefined && revision <= s.revision) return;
    this.#seen.set(daemonId, { revision, since: s?.since ?? 0, gone: true });
  }

  /** This daemon's own KV operation failed at `now`: judgements pause until `kvOk`. */
  kvFailed(now: number): void {
    this.#pausedAt ??= now;
  }

  /** This daemon's own KV operation succeeded at `now`: a pause ends and every countdown resumes where it stopped. */
  kvOk(now: number): void {
    if (this.#pausedAt === null) return;
    const paused = Math.max(0, now - this.#pausedAt);
    this.#pausedAt = null;
    for (const s of this.#seen.values()) if (!s.gone) s.since += paused;
  }

  get paused(): boolean {
    return this.#pausedAt !== null;
  }

  /** Whether `daemonId` may be taken to be dead at `now`. Never while paused, except for a daemon that left. */
  isStale(daemonId: string, now: number): boolean {
    let s = this.#seen.get(daemonId);
    if (s === undefined) {
      s = { revision: 0, since: this.#pausedAt ?? now, gone: false };
      this.#seen.set(daemonId, s);
    }
    if (s.gone) return true;
    if (this.#pausedAt !== null) return false;
    return now - s.since >= this.ttlMs;
  }

  /**
   * How long until `daemonId` may be judged stale at the earliest, from `now` (0: it is stale already), if its heartbeat
   * does not change meanwhile. `Infinity` while judgements are paused (nobody becomes stale then).
   */
  msUntilStale(daemonId: string, now: number): number {
    if (this.isStale(daemonId, now)) return 0;
    if (this.#pausedAt !== null) return Number.POSITIVE_INFINITY;
    const s = this.#seen.get(daemonId) as Seen;
    return Math.max(0, this.ttlMs - (now - s.since));
  }

  /** The newest heartbeat revision seen of `daemonId` (0: none). */
  revisionOf(daemonId: string): number {
    return this.#seen.get(daemonId)?.revision ?? 0;
  }

  /** Every daemon heard of, with its heartbeat age at `now` (while paused, the age when the pause began). */
  view(now: number): DaemonView[] {
    const at = this.#pausedAt ?? now;
    return [...this.#seen.entries()]
      .map(([daemonId, s]) => ({ daemonId, ageMs: Math.max(0, at - s.since), gone: s.gone, stale: s.gone || (this.#pausedAt === null && now - s.since >= this.ttlMs) }))
      .sort((a, b) => (a.daemonId < b.daemonId ? -1 : a.daemonId > b.daemonId ? 1 : 0));
  }
}
