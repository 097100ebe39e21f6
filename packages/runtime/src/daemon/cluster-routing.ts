import { TransportError, type InboundMessage, type Transport, type TransportSubscription } from '@baton/client';
import { SESSION_STREAMS_PREFIX, sessionStream, type EventLog } from '@baton/log-schema';
import { ErrorReplySchema, ProtocolError, decodeReply, encodingFromHeaders, type Subjects } from '@baton/protocol';
import { ClusterError } from '../cluster/cluster-error.ts';
import type { Claim, ClusterMembership } from '../cluster/cluster-membership.ts';
import type { DaemonLogger } from './daemon-options.ts';

/** Where a session's records live: only on its owner's disk (`local`), or also in the replicated log. */
export type Durability = 'local' | 'replicated';

export interface ClusterRoutingOptions {
  readonly membership: ClusterMembership;
  readonly transport: Transport;
  readonly subjects: Subjects;
  /** This daemon's event log: whether it holds a session's records (durability `local`). */
  readonly log: EventLog;
  readonly durability: Durability;
  /** How long a forwarded `open` waits for the holder's answer. */
  readonly forwardTimeoutMs: number;
  /** Brings a claimed session's local log up to the history it took over (durability `replicated`). */
  readonly hydrate: (claim: Claim) => Promise<void>;
  /**
   * Resolves once every record of the session this daemon wrote locally is in the replicated log too (a write that
   * failed earlier is retried): a request is served only then, so nothing it answers rests on unreplicated records.
   */
  readonly catchUp: (sessionId: string) => Promise<void>;
  /** Subscribes the session's request subjects; the daemon knows their handlers. */
  readonly serve: (sessionId: string) => TransportSubscription;
  /** Drops the session from memory without writing for it. */
  readonly forget: (sessionId: string) => void;
  readonly logger: DaemonLogger;
}

/**
 * Header of a forwarded `open` that came on a project's subjects: its project, which the holder checks the session
 * against. Only daemons publish on the internal subject it travels on.
 */
export const SCOPE_HEADER = 'baton-scope-project';

/** The internal subject a holder answers `open` on for its session: other daemons forward `open` there. */
export function sessionOpenSubject(subjects: Subjects, sessionId: string): string {
  return `${subjects.prefix}.v1.session.${sessionId}.open`;
}

/**
 * Which daemon serves which session, in cluster mode. `open` arrives through the queue group at any daemon: that
 * daemon takes the session when nobody holds it or its holder is stale (a new epoch, its history hydrated, its
 * subjects subscribed), and otherwise forwards the request to the holder. Only the holder subscribes to a session's
 * subjects, so every request reaches the daemon that has its state.
 *
 * A holder that finds it was taken over (its log write was fenced, or its own lease lapsed and a newer epoch exists)
 * drops the session: it unsubscribes, forgets it without writing, and answers `unavailable` with reason `moved`, which
 * tells a client to open the session again.
 */
/** How much longer than a holder's remaining lease a forwarded `open` waits for its answer. */
const STALE_MARGIN_MS = 100;

export class ClusterRouting {
  readonly #o: ClusterRoutingOptions;
  readonly #subs = new Map<string, TransportSubscription>();
  readonly #acquiring = new Map<string, Promise<Acquired>>();
  /** Held sessions to re-check before serving: this daemon's lease lapsed since it last knew it held them. */
  readonly #suspect = new Set<string>();
  #left = false;
  /** Re-checks of held sessions running (after a lapse of this daemon's own heartbeat). */
  #rechecking = 0;

  constructor(options: ClusterRoutingOptions) {
    this.#o = options;
    options.membership.onLapse = (since) => void this.recheck(since);
  }

  /**
   * After this daemon's own heartbeat lapsed (a pause, a partition): every held session is re-checked at once, and
   * one a newer epoch was claimed for is dropped — unsubscribed before a request could be answered from stale memory,
   * and nothing more written for it.
   */
  async recheck(sinceLastMs: number): Promise<void> {
    this.#rechecking++;
    try {
      await this.#recheck(sinceLastMs);
    } finally {
      this.#rechecking--;
    }
  }

  /**
   * Whether this daemon should take no `open` now: its lease is not fresh (it was paused or cut off, and others may be
   * taking its sessions), or it is re-checking what it holds after such a lapse. The open then goes to another daemon.
   */
  get outOfTouch(): boolean {
    return this.#rechecking > 0 || !this.#o.membership.leaseFresh();
  }

  /**
   * Whether this daemon takes an `open` now: not while out of touch, after one heartbeat to find out (a heartbeat
   * that is merely late — a busy event loop — makes the lease fresh again; one after a real lapse starts the re-check).
   */
  async takesOpens(): Promise<boolean> {
    if (!this.outOfTouch) return true;
    await this.#o.membership.beat();
    return !this.outOfTouch;
  }

  async #recheck(sinceLastMs: number): Promise<void> {
    const m = this.#o.membership;
    const held = m.heldSessions().map((h) => h.sessionId);
    for (const sid of held) this.#suspect.add(sid);
    this.#o.logger('warn', 'heartbeat lapsed: re-checking held sessions', { sinceLastMs: Math.round(sinceLastMs), sessions: held.length });
    await Promise.all(
      held.map(async (sid) => {
        try {
          if (await m.stillHolds(sid)) this.#suspect.delete(sid);
          else this.drop(sid, 'a newer epoch was claimed while this daemon was out of touch');
        } catch (err) {
          this.#o.logger('warn', 'could not re-check a held session', { sessionId: sid, error: String(err) });
        }
      }),
    );
  }

  get membership(): ClusterMembership {
    return this.#o.membership;
  }

  /**
   * Makes this daemon the holder of `sessionId` when it may; otherwise names the holder. One attempt at a time: a
   * second `open` that arrives while the session is being claimed waits for that claim's hydration — the membership
   * holds the session as soon as its epoch is claimed, but until its history is in the local log an `open` served
   * from it would find no session and start a new one at seq 0 over the history it took over.
   */
  acquire(sessionId: string): Promise<Acquired> {
    let pending = this.#acquiring.get(sessionId);
    if (pending !== undefined) return pending;
    if (this.#o.membership.holds(sessionId)) return Promise.resolve({ held: true });
    pending = this.#acquire(sessionId).finally(() => this.#acquiring.delete(sessionId));
    this.#acquiring.set(sessionId, pending);
    return pending;
  }

  async #acquire(sessionId: string): Promise<Acquired> {
    if (this.#left) throw new ProtocolError('unavailable', 'this daemon has left the cluster', { reason: 'draining' });
    const m = this.#o.membership;
    if (this.#o.durability === 'local' && this.#o.log.lastSeq(sessionStream(sessionId)) === 0) {
      // Its records can only be on the disk of whoever had it: take it only when it is new.
      const latest = await m.epochs.latest(sessionId);
      if (latest !== null && latest.daemon !== m.daemonId) {
        if (!(await m.isStale(latest.daemon))) return { held: false, owner: latest.daemon, epoch: latest.epoch };
        throw new ProtocolError('unavailable', `session ${sessionId} was held by daemon ${latest.daemon}, which is gone; with durability local its records are on that daemon's disk`, {
          reason: 'records_elsewhere',
          owner: latest.daemon,
        });
      }
    }
    const claim = await m.claim(sessionId);
    if (!claim.claimed) return { held: false, owner: claim.owner, epoch: claim.epoch };
    try {
      await this.#o.hydrate(claim);
    } catch (err) {
      m.release(sessionId);
      throw err;
    }
    this.#subs.get(sessionId)?.unsubscribe();
    this.#subs.set(sessionId, this.#o.serve(sessionId));
    this.#o.logger('info', 'session claimed', { sessionId, epoch: claim.epoch, marker: claim.markerIndex, overtaken: claim.overtaken, batches: claim.history.batches.length });
    return { held: true };
  }

  /**
   * Claims every session of this daemon's log that no daemon ever claimed (written before it ran in cluster mode), so
   * that other daemons find its holder instead of taking its id for a new session. With durability `replicated` the
   * claim also writes its records to the replicated log. Sessions claimed before (by anyone) are left alone.
   */
  async adoptUnclaimed(): Promise<number> {
    const ids = [...this.#o.log.streams(SESSION_STREAMS_PREFIX)].map((s) => s.slice(SESSION_STREAMS_PREFIX.length));
    let adopted = 0;
    for (const sessionId of ids) {
      if ((await this.#o.membership.epochs.latest(sessionId)) !== null) continue;
      if ((await this.acquire(sessionId)).held) adopted++;
    }
    return adopted;
  }

  /**
   * Takes `sessionId` (`{ held: true }`) or has its holder answer the `open` (`forward`). A holder that does not answer
   * — paused, cut off, or dead — is waited out when its lease runs out within the forward's time: once it may be judged
   * stale the session is claimed here, so an open that reached a live daemon is answered as soon as the lease allows
   * instead of failing and leaving the client to try again (and maybe reach the paused holder through the queue group).
   */
  async takeOrForward(sessionId: string, msg: Pick<InboundMessage, 'data' | 'headers'>): Promise<{ readonly held: true } | { readonly held: false; readonly reply: Record<string, unknown> }> {
    const m = this.#o.membership;
    const deadline = performance.now() + this.#o.forwardTimeoutMs;
    for (;;) {
      const acquired = await this.acquire(sessionId);
      if (acquired.held) return { held: true };
      // Not longer than the holder's lease has left (and a little): a holder that is gone is not waited on past it.
      const left = deadline - performance.now();
      const timeoutMs = Math.max(1, Math.min(left, m.msUntilStale(acquired.owner) + STALE_MARGIN_MS));
      try {
        return { held: false, reply: await this.forward(sessionId, acquired.owner, msg, timeoutMs) };
      } catch (err) {
        if (!(err instanceof ProtocolError && (err.details as { reason?: unknown } | undefined)?.reason === 'owner_unreachable')) throw err;
        const wait = m.msUntilStale(acquired.owner);
        if (performance.now() + wait >= deadline) throw err;
        // Then `acquire` re-reads the holder's heartbeat from the bucket: a holder that beat meanwhile keeps it.
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** Relays an `open` to the session's holder and returns its answer (its error as a `ProtocolError`). */
  async forward(sessionId: string, owner: string, msg: Pick<InboundMessage, 'data' | 'headers'>, timeoutMs = this.#o.forwardTimeoutMs): Promise<Record<string, unknown>> {
    let reply;
    try {
      reply = await this.#o.transport.request(sessionOpenSubject(this.#o.subjects, sessionId), msg.data, { headers: msg.headers, timeoutMs });
    } catch (err) {
      if (err instanceof TransportError && err.retryable) {
        throw new ProtocolError('unavailable', `session ${sessionId} is held by daemon ${owner}, which did not answer; retry`, { reason: 'owner_unreachable', owner });
      }
      throw err;
    }
    // The holder answers in the request's encoding; a reply that names its content type is read as it says.
    const named = Object.keys(reply.headers).some((key) => key.toLowerCase() === 'content-type');
    const value = decodeReply(reply.data, encodingFromHeaders(named ? reply.headers : msg.headers));
    if (typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false) {
      const failure = ErrorReplySchema.parse(value);
      throw new ProtocolError(failure.error.code, failure.error.message, failure.error.details);
    }
    const { ok: _ok, ...body } = value as Record<string, unknown>;
    return body;
  }

  /**
   * Checks, before serving a request of `sessionId`, that this daemon still holds it: after its own lease lapsed
   * (a pause, a partition) it beats again and re-reads whether a newer epoch exists.
   */
  async guard(sessionId: string): Promise<void> {
    const m = this.#o.membership;
    if (!m.holds(sessionId)) throw moved(sessionId);
    if (!m.leaseFresh()) {
      await m.beat();
      if (!m.leaseFresh()) throw new ProtocolError('unavailable', 'this daemon cannot reach the cluster to renew its lease; retry', { reason: 'lease_uncertain' });
      for (const h of m.heldSessions()) this.#suspect.add(h.sessionId);
    }
    if (this.#suspect.has(sessionId)) {
      if (!(await m.stillHolds(sessionId))) {
        this.drop(sessionId, 'a newer epoch was claimed while this daemon was out of touch');
        throw moved(sessionId);
      }
      this.#suspect.delete(sessionId);
    }
    try {
      await this.#o.catchUp(sessionId);
    } catch (err) {
      throw this.failure(sessionId, err);
    }
  }

  /**
   * Maps a failure while serving `sessionId`: a fenced write drops the session (`unavailable`, reason `moved`); a
   * JetStream outage is `unavailable` too; anything else passes unchanged.
   */
  failure(sessionId: string, err: unknown): unknown {
    if (!(err instanceof ClusterError)) return err;
    if (err.code === 'fenced' || err.code === 'not_owner') {
      this.drop(sessionId, err.message);
      return moved(sessionId, typeof err.details?.['owner'] === 'string' ? err.details['owner'] : undefined);
    }
    if (err.code === 'unavailable') return new ProtocolError('unavailable', err.message, { reason: 'jetstream' }, { cause: err });
    return err;
  }

  /** Stops serving a session this daemon lost: no subscription, nothing in memory, nothing more written. */
  drop(sessionId: string, reason: string): void {
    const wasHeld = this.#o.membership.holds(sessionId) || this.#subs.has(sessionId);
    this.#o.membership.release(sessionId);
    this.#subs.get(sessionId)?.unsubscribe();
    this.#subs.delete(sessionId);
    this.#suspect.delete(sessionId);
    this.#o.forget(sessionId);
    if (wasHeld) this.#o.logger('warn', 'session dropped', { sessionId, reason });
  }

  /**
   * Hands every session off (a drain): unsubscribes them, forgets them and deletes this daemon's heartbeat, so other
   * daemons take them over at their next `open` without waiting for the lease to expire. The caller has written
   * everything it had for them. Leaving twice does nothing more.
   */
  async leave(): Promise<void> {
    if (this.#left) return;
    this.#left = true;
    for (const sessionId of [...this.#subs.keys()]) {
      this.#subs.get(sessionId)?.unsubscribe();
      this.#subs.delete(sessionId);
      this.#o.membership.release(sessionId);
      this.#o.forget(sessionId);
    }
    await this.#o.membership.stop(true);
    this.#o.logger('info', 'left the cluster: sessions handed off', {});
  }

  /** Stops beating without leaving (a crash-like stop: sessions are taken over once the lease expires). */
  async stop(): Promise<void> {
    for (const sub of this.#subs.values()) sub.unsubscribe();
    this.#subs.clear();
    if (!this.#left) await this.#o.membership.stop(false);
  }
}

/** What `ClusterRouting.acquire` found. */
export type Acquired = { readonly held: true } | { readonly held: false; readonly owner: string; readonly epoch: number };

function moved(sessionId: string, owner?: string): ProtocolError {
  return new ProtocolError('unavailable', `session ${sessionId} is held by another daemon now; open it again`, { reason: 'moved', ...(owner !== undefined ? { owner } : {}) });
}
