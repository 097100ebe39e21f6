import type { KV } from '@nats-io/kv';
import type { QueuedIterator } from '@nats-io/nats-core';
import type { KvWatchEntry } from '@nats-io/kv';
import type { ClusterNames } from './cluster-names.ts';
import type { LeaseJudge } from './lease-judge.ts';
import { isWrongLastSequence } from './jetstream-errors.ts';
import { withRetry } from './retry.ts';

export interface DaemonHeartbeatOptions {
  readonly kv: KV;
  readonly names: ClusterNames;
  readonly daemonId: string;
  readonly judge: LeaseJudge;
  /** Time between heartbeats (a third of the lease TTL by default). */
  readonly intervalMs: number;
  /** Milliseconds on this daemon's monotonic clock. */
  readonly monotonic: () => number;
  /** What the heartbeat carries besides the daemon id and the time (sessions held, …); shown by `cluster status`. */
  readonly info: () => Record<string, unknown>;
  /** Wall-clock time stamped in the heartbeat (for operators; nothing is judged by it). */
  readonly wallClock: () => number;
  /** Told about failures of the heartbeat or the watch (logged by the daemon). */
  readonly onError?: (what: string, err: unknown) => void;
  /**
   * Told after a heartbeat succeeded that came `lapseMs` or more after the previous one (this process was paused, or
   * cut off): other daemons may have taken its sessions meanwhile.
   */
  readonly onLapse?: (sinceLastMs: number) => void;
  readonly lapseMs?: number;
  /**
   * A daemon whose heartbeat has not changed for this long (on this daemon's clock) is taken to be dead for good and
   * its heartbeat deleted, so listings of the cluster stop showing it. Absent: never.
   */
  readonly forgetMs?: number;
  /** Told when this daemon deleted a dead daemon's heartbeat. */
  readonly onForgot?: (daemonId: string) => void;
}

const prefixLength = 'daemon.'.length;

/**
 * A daemon's liveness in the cluster: it writes its heartbeat `daemon.<id>` with a blind put every `intervalMs` (no
 * revision check, so it can never be refused), and watches every daemon's heartbeat to feed the `LeaseJudge`. A put
 * that fails pauses the judge (this daemon cannot tell others' silence from its own isolation); one that succeeds
 * resumes it. Leaving deletes the key, so standbys take its sessions over without waiting for the lease to expire.
 */
export class DaemonHeartbeat {
  readonly #o: DaemonHeartbeatOptions;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #watch: QueuedIterator<KvWatchEntry> | null = null;
  #lastOk: number | null = null;
  #stopped = false;
  #beating: Promise<void> = Promise.resolve();
  /** Dead daemons whose heartbeat is being deleted. */
  readonly #forgetting = new Set<string>();

  constructor(options: DaemonHeartbeatOptions) {
    this.#o = options;
  }

  /**
   * Writes the first heartbeat, starts the watch and the periodic beat. A bucket just created may have no leader for a
   * few seconds (its replicas elect one): transient failures are retried (`withRetry`), others reject.
   */
  async start(): Promise<void> {
    const key = this.#o.names.daemonKey(this.#o.daemonId);
    await withRetry(`first heartbeat ${key}`, () => this.#o.kv.put(key, this.#value()));
    this.#lastOk = this.#o.monotonic();
    this.#watch = await withRetry(`watch ${this.#o.names.daemonKeys}`, () => this.#o.kv.watch({ key: this.#o.names.daemonKeys }));
    void this.#follow(this.#watch);
    this.#schedule();
  }

  /** Milliseconds (monotonic) since this daemon's last heartbeat was acknowledged; null before the first. */
  sinceLastBeat(now: number = this.#o.monotonic()): number | null {
    return this.#lastOk === null ? null : now - this.#lastOk;
  }

  /** Reads one daemon's heartbeat from the bucket's leader now (before judging it stale on the watch's word alone). */
  async refresh(daemonId: string): Promise<void> {
    const entry = await this.#o.kv.get(this.#o.names.daemonKey(daemonId));
    if (entry === null) return;
    if (entry.operation === 'PUT') this.#o.judge.observe(daemonId, entry.revision, this.#o.monotonic());
    else this.#o.judge.left(daemonId, entry.revision);
  }

  /** Beats once now (after a pause was noticed), resolving when the put settled. */
  beat(): Promise<void> {
    this.#beating = this.#beating.then(async () => {
      try {
        const revision = await this.#o.kv.put(this.#o.names.daemonKey(this.#o.daemonId), this.#value());
        const now = this.#o.monotonic();
        const since = this.#lastOk === null ? 0 : now - this.#lastOk;
        this.#lastOk = now;
        if (this.#o.lapseMs !== undefined && since >= this.#o.lapseMs) this.#o.onLapse?.(since);
        this.#o.judge.kvOk(now);
        this.#o.judge.observe(this.#o.daemonId, revision, now);
        this.#forgetDead(now);
      } catch (err) {
        this.#o.judge.kvFailed(this.#o.monotonic());
        this.#o.onError?.('heartbeat', err);
      }
    });
    return this.#beating;
  }

  /** Stops beating and watching; with `leave`, deletes the heartbeat so this daemon's sessions are free at once. */
  async stop(leave: boolean): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#watch?.stop();
    await this.#beating;
    if (leave) await this.#o.kv.delete(this.#o.names.daemonKey(this.#o.daemonId)).catch((err: unknown) => this.#o.onError?.('leave', err));
  }

  /** Deletes the heartbeat of every daemon silent for `forgetMs` (each once at a time). */
  #forgetDead(now: number): void {
    const after = this.#o.forgetMs;
    if (after === undefined) return;
    for (const d of this.#o.judge.view(now)) {
      if (d.gone || d.daemonId === this.#o.daemonId || d.ageMs < after || this.#forgetting.has(d.daemonId)) continue;
      const revision = this.#o.judge.revisionOf(d.daemonId);
      // A daemon only asked about (never seen beating) has no heartbeat to delete.
      if (revision === 0) continue;
      this.#forgetting.add(d.daemonId);
      void this.#forget(d.daemonId, revision).finally(() => this.#forgetting.delete(d.daemonId));
    }
  }

  async #forget(daemonId: string, revision: number): Promise<void> {
    try {
      // Only the heartbeat judged dead: one the daemon wrote since (it came back) is kept.
      await this.#o.kv.delete(this.#o.names.daemonKey(daemonId), { previousSeq: revision });
      this.#o.judge.left(daemonId, revision + 1);
      this.#o.onForgot?.(daemonId);
    } catch (err) {
      // Another daemon deleted it first, or it beat again: nothing to do.
      if (!isWrongLastSequence(err)) this.#o.onError?.('forget a dead daemon', err);
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.beat().then(() => this.#schedule());
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  #value(): string {
    return JSON.stringify({ daemon_id: this.#o.daemonId, at: this.#o.wallClock(), ...this.#o.info() });
  }

  async #follow(watch: QueuedIterator<KvWatchEntry>): Promise<void> {
    try {
      for await (const e of watch) {
        const id = e.key.slice(prefixLength);
        if (e.operation === 'PUT') this.#o.judge.observe(id, e.revision, this.#o.monotonic());
        else this.#o.judge.left(id, e.revision);
      }
    } catch (err) {
      if (!this.#stopped) this.#o.onError?.('watch', err);
    }
  }
}
