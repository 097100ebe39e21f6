import type { NatsConnection } from '@nats-io/nats-core';
import type { ClusterNames } from './cluster-names.ts';
import { ClusterStore } from './cluster-store.ts';
import { DaemonHeartbeat } from './daemon-heartbeat.ts';
import { LeaseJudge, type DaemonView } from './lease-judge.ts';
import type { LogHistory } from './log-history.ts';
import { claimSession, readTakenHistory, type ClaimOutcome, type HeldSession } from './session-claim.ts';
import { SessionEpochs } from './session-epochs.ts';
import { SessionLog } from './session-log.ts';
import { SessionLogWriter } from './session-log-writer.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';

export interface ClusterMembershipOptions {
  readonly connection: NatsConnection;
  readonly names: ClusterNames;
  readonly daemonId: string;
  /** Replicas of the log stream and the KV bucket. */
  readonly replicas: number;
  /** Lease TTL: a daemon whose heartbeat has not changed for this long may have its sessions taken over. */
  readonly leaseMs: number;
  /** Milliseconds on this daemon's monotonic clock (default `performance.now`). */
  readonly monotonic?: () => number;
  /** Wall-clock milliseconds, stamped in claims and heartbeats for operators (default `Date.now`). */
  readonly wallClock?: () => number;
  /** What the heartbeat tells other daemons besides the id (sessions held). */
  readonly info?: () => Record<string, unknown>;
  readonly onError?: (what: string, err: unknown) => void;
  /**
   * How opening the cluster's JetStream resources retries transient failures (default: for up to 30 s). A daemon
   * that retries the whole join itself opens them once per attempt (a deadline of 0).
   */
  readonly openRetry?: RetryPolicy;
  /** A daemon silent this long has its heartbeat deleted (it no longer shows in listings). Absent: never. */
  readonly forgetDeadMs?: number;
  readonly onForgot?: (daemonId: string) => void;
}

/** A session this daemon holds, with its writer. */
interface Held {
  readonly held: HeldSession;
  readonly log: SessionLog;
  readonly writer: SessionLogWriter;
}

/** A successful claim and the history the new owner takes over (everything before its marker). */
export type Claim = Extract<ClaimOutcome, { claimed: true }> & { readonly history: LogHistory };

/** What `ClusterMembership.view` reports. */
export interface ClusterView {
  readonly daemonId: string;
  readonly leaseMs: number;
  /** This daemon's own KV operations fail: nobody is judged stale until they work again. */
  readonly paused: boolean;
  /** Milliseconds since this daemon's own heartbeat was last acknowledged. */
  readonly heartbeatAgeMs: number | null;
  readonly daemons: readonly DaemonView[];
  readonly sessions: readonly { readonly sessionId: string; readonly epoch: number; readonly nextIndex: number }[];
}

/**
 * This daemon's place in a cluster: its heartbeat, its view of the others' (a `LeaseJudge`), and the sessions it holds
 * with their log writers. A session is claimed with a new epoch (`claimSession`) when nobody holds it or its holder is
 * stale — judged on this daemon's clock after re-reading the holder's heartbeat from the bucket's leader, so a lagging
 * watch cannot make a live daemon look dead — and released when it is fenced or this daemon leaves.
 */
export class ClusterMembership {
  readonly daemonId: string;
  readonly store: ClusterStore;
  readonly judge: LeaseJudge;
  readonly epochs: SessionEpochs;
  readonly #heartbeat: DaemonHeartbeat;
  readonly #monotonic: () => number;
  readonly #wallClock: () => number;
  readonly #held = new Map<string, Held>();
  /** Told when this daemon's own heartbeat lapsed and then succeeded again (its routing re-checks what it holds). */
  onLapse: ((sinceLastMs: number) => void) | null = null;

  private constructor(options: ClusterMembershipOptions, store: ClusterStore, judge: LeaseJudge, heartbeat: DaemonHeartbeat) {
    this.daemonId = options.daemonId;
    this.store = store;
    this.judge = judge;
    this.#heartbeat = heartbeat;
    this.epochs = new SessionEpochs(store.kv, options.names);
    this.#monotonic = options.monotonic ?? (() => performance.now());
    this.#wallClock = options.wallClock ?? (() => Date.now());
  }

  /** Opens the cluster's JetStream resources (creating them when missing) and starts beating. */
  static async join(options: ClusterMembershipOptions): Promise<ClusterMembership> {
    // Opening is idempotent (each resource is created when missing, else opened): retried while JetStream elects leaders.
    const store = await withRetry('open the cluster store', () => ClusterStore.open(options.connection, options.names, { replicas: options.replicas }), options.openRetry ?? DEFAULT_RETRY);
    const judge = new LeaseJudge(options.leaseMs);
    const monotonic = options.monotonic ?? (() => performance.now());
    let membership: ClusterMembership | null = null;
    const heartbeat = new DaemonHeartbeat({
      kv: store.kv,
      names: options.names,
      daemonId: options.daemonId,
      judge,
      intervalMs: Math.max(50, Math.floor(options.leaseMs / 3)),
      monotonic,
      wallClock: options.wallClock ?? (() => Date.now()),
      info: () => ({ sessions: membership?.heldCount ?? 0, ...options.info?.() }),
      ...(options.onError !== undefined ? { onError: options.onError } : {}),
      // Past two thirds of the lease without a heartbeat, others may judge this daemon stale soon or already have.
      lapseMs: (options.leaseMs * 2) / 3,
      onLapse: (since) => membership?.onLapse?.(since),
      ...(options.forgetDeadMs !== undefined ? { forgetMs: options.forgetDeadMs } : {}),
      ...(options.onForgot !== undefined ? { onForgot: options.onForgot } : {}),
    });
    membership = new ClusterMembership(options, store, judge, heartbeat);
    await heartbeat.start();
    return membership;
  }

  get heldCount(): number {
    return this.#held.size;
  }

  holds(sessionId: string): boolean {
    return this.#held.has(sessionId);
  }

  /** The writer of a held session (undefined when this daemon does not hold it). */
  writer(sessionId: string): SessionLogWriter | undefined {
    return this.#held.get(sessionId)?.writer;
  }

  heldSessions(): HeldSession[] {
    return [...this.#held.values()].map((h) => h.held);
  }

  /**
   * Whether this daemon may still act as an owner: its own heartbeat was acknowledged within two thirds of the lease.
   * Past that, another daemon may soon judge it stale, so it stops writing until a heartbeat succeeds again (safety
   * does not depend on this — the log refuses a fenced writer — but a stale owner that keeps writing would keep a new
   * owner's takeover marker out).
   */
  leaseFresh(): boolean {
    const age = this.#heartbeat.sinceLastBeat(this.#monotonic());
    return age !== null && age < (this.judge.ttlMs * 2) / 3;
  }

  /** Beats now (after the lease was found not fresh); resolves when the put settled. */
  beat(): Promise<void> {
    return this.#heartbeat.beat();
  }

  /** Whether `daemonId` may be taken to be dead now, after re-reading its heartbeat from the bucket's leader. */
  async isStale(daemonId: string): Promise<boolean> {
    if (daemonId === this.daemonId) return true;
    await this.#heartbeat.refresh(daemonId).catch(() => this.judge.kvFailed(this.#monotonic()));
    return this.judge.isStale(daemonId, this.#monotonic());
  }

  /**
   * How long until `daemonId` may be judged stale, by what this daemon has seen of its heartbeat so far (0: stale now;
   * `Infinity` while this daemon's judgements are paused). `isStale` re-reads the heartbeat before a claim relies on it.
   */
  msUntilStale(daemonId: string): number {
    if (daemonId === this.daemonId) return 0;
    return this.judge.msUntilStale(daemonId, this.#monotonic());
  }

  /**
   * Claims `sessionId` unless a live daemon holds it; on success, reads the history before the marker and holds the
   * session. Already held: claims a new epoch all the same (its caller re-took a session it had dropped).
   */
  async claim(sessionId: string): Promise<Claim | Extract<ClaimOutcome, { claimed: false }>> {
    const log = new SessionLog(this.store, sessionId);
    const outcome = await claimSession(this.epochs, log, this.daemonId, { isStale: (owner) => this.isStale(owner), at: this.#wallClock() });
    if (!outcome.claimed) return outcome;
    const history = await readTakenHistory(log, outcome);
    this.#held.set(sessionId, { held: outcome, log, writer: new SessionLogWriter(this.store, log, outcome) });
    return { ...outcome, history };
  }

  /** Forgets a held session (fenced, or handed off): this daemon writes nothing more for it. */
  release(sessionId: string): void {
    this.#held.delete(sessionId);
  }

  /**
   * Whether this daemon still holds the newest epoch of `sessionId` (after a lapse of its own heartbeat, before
   * answering from memory). False releases the session.
   */
  async stillHolds(sessionId: string): Promise<boolean> {
    const held = this.#held.get(sessionId);
    if (held === undefined) return false;
    const newer = await this.epochs.claimOf(sessionId, held.held.epoch + 1);
    if (newer === null) return true;
    this.release(sessionId);
    return false;
  }

  view(): ClusterView {
    const now = this.#monotonic();
    return {
      daemonId: this.daemonId,
      leaseMs: this.judge.ttlMs,
      paused: this.judge.paused,
      heartbeatAgeMs: this.#heartbeat.sinceLastBeat(now),
      daemons: this.judge.view(now),
      sessions: [...this.#held.values()].map((h) => ({ sessionId: h.held.sessionId, epoch: h.held.epoch, nextIndex: h.writer.nextIndex })),
    };
  }

  /**
   * Stops beating. With `leave`, deletes the heartbeat: every session this daemon held may be claimed at once (a
   * graceful hand-off); the caller has stopped writing for them first.
   */
  async stop(leave: boolean): Promise<void> {
    if (leave) this.#held.clear();
    await this.#heartbeat.stop(leave);
  }
}
