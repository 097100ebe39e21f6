import { createHash, randomBytes } from 'node:crypto';
import { relative } from 'node:path';
import {
  CONTINUED_KEY,
  HANDOFFS_STREAM,
  SESSION_RECORDS,
  checkRecord,
  handoffKey,
  handoffLog,
  sessionStream,
  tokenKey,
  type EventLog,
  type SessionRecordSchemas,
  type StoredSessionRecord,
  type StreamLog,
} from '@baton/log-schema';
import {
  DEFAULT_HANDOFF_TTL_MS,
  DEFAULT_HANDOFF_WAIT_MS,
  DEFAULT_PROVIDER_API,
  ProtocolError,
  userTextMessage,
  viewOf,
  type HandoffReply,
  type HandoffRefusal,
  type HandoffRequest,
  type HandoffWriter,
  type Lineage,
  type LineageKind,
  type Message,
  type ModelInfo,
  type ProviderApi,
} from '@baton/protocol';
import type { HostPool } from '../host/host-pool.ts';
import type { Clock } from '../time/clock.ts';
import type { CommitVersions } from './commit-versions.ts';
import type { LoadedSession } from './loaded-session.ts';
import { memoryPathsOf } from './reply-parts.ts';
import type { SessionServiceOptions, WaitOutcome } from './session-service-options.ts';

/** A grant as its session's stream holds it. */
export type Grant = Extract<StoredSessionRecord, { type: 'session.handoff_granted' }>['payload'];

/** What the handoffs need of the session service besides its options. */
export interface HandoffCalls {
  /** Runs `work` in the session's mailbox, the session loaded. */
  inSession<T>(sessionId: string, work: (session: LoadedSession) => Promise<T>): Promise<T>;
  /** Runs `work` in the session's mailbox without loading it. */
  inMailbox<T>(sessionId: string, work: () => Promise<T>): Promise<T>;
  waitForWriter(sessionId: string, timeoutMs: number): Promise<WaitOutcome>;
  /** The project a session belongs to (null: no such session). */
  projectOf(sessionId: string): string | null;
}

/** What the handoffs work with. */
export interface HandoffDeps extends HandoffCalls {
  readonly log: EventLog;
  readonly sessions: StreamLog<SessionRecordSchemas>;
  readonly pool: HostPool;
  readonly clock: Clock;
  readonly memoryRoot: string;
  readonly versions: CommitVersions;
  /** Default life of a token. */
  readonly ttlMs: number;
  /** 32 random bytes (tests may fix them). */
  readonly randomBytes?: () => Buffer;
}

/** SHA-256 of a handoff token, base64url: all the daemon ever stores of it. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** The id of the session a token opens: derived from its digest, so every claim of one token names one session. */
export function handoffSessionId(digest: string): string {
  return `h-${createHash('sha256').update(`session:${digest}`).digest('base64url').slice(0, 24)}`;
}

/** The `forbidden` of a refused token; unknown and guessed tokens get the same message. */
export function refusal(reason: HandoffRefusal): ProtocolError {
  const message =
    reason === 'handoff_expired' ? 'this handoff token expired; ask for a new handoff' : reason === 'handoff_used' ? 'this handoff token was already used by another credential' : 'unknown handoff token';
  return new ProtocolError('forbidden', message, { reason });
}

/** The context of a grant in the API of the agent that claims it (its one message's text is the same in every API). */
export function contextIn(context: readonly Message[], api: ProviderApi): Message[] {
  return context.map((m) => (m.native === undefined && api === DEFAULT_PROVIDER_API ? m : userTextMessage(api, m.id, viewOf(m).text)));
}

/**
 * Handoffs: granting a one-time token on a session (`grant`), and finding what a token grants (`find`). The token
 * itself is never stored: its digest indexes the grant (the `handoff/tokens` stream, lookup key per digest) and the
 * grant sits in the old session's stream (`session.handoff_granted`, with the context it carries), so both outlive
 * the daemon.
 */
export class SessionHandoffs {
  readonly #d: HandoffDeps;

  constructor(o: SessionServiceOptions, sessions: StreamLog<SessionRecordSchemas>, versions: CommitVersions, calls: HandoffCalls) {
    this.#d = {
      ...calls,
      log: o.log,
      sessions,
      pool: o.pool,
      clock: o.clock,
      memoryRoot: o.memoryRoot,
      versions,
      ttlMs: o.handoffTtlMs ?? DEFAULT_HANDOFF_TTL_MS,
      ...(o.randomBytes !== undefined ? { randomBytes: o.randomBytes } : {}),
    };
  }

  get deps(): HandoffDeps {
    return this.#d;
  }

  /**
   * Grants a handoff on `sessionId`: a running writer is awaited at most `wait_ms` (default 30 s), then the worker
   * renders the context for the target API and model, the grant is logged, and the token is returned once.
   */
  async grant(sessionId: string, req: HandoffRequest): Promise<Omit<HandoffReply, 'ok'>> {
    const d = this.#d;
    const running = await d.inSession(sessionId, (s) => Promise.resolve(s.summary.writerId !== null));
    let writer: HandoffWriter = 'none';
    if (running) {
      const waited = await d.waitForWriter(sessionId, req.wait_ms ?? DEFAULT_HANDOFF_WAIT_MS);
      writer = waited.outcome === 'timeout' ? 'still_running' : waited.outcome === 'no-writer' ? 'none' : 'awaited';
    }
    const token = `bh_${(d.randomBytes ?? (() => randomBytes(32)))().toString('base64url')}`;
    const digest = tokenDigest(token);
    return await d.inSession(sessionId, async (session) => {
      const opened = this.#opening(sessionId);
      const to = req.to ?? session.api;
      const model: ModelInfo = req.model ?? opened.request.model;
      const id = `baton-handoff-${digest.slice(0, 16)}`;
      const rendered = await d.pool.call(sessionId, 'session.handoff', { sessionId, id, to, model });
      if (!rendered.ok) throw new ProtocolError('conflict', `session ${sessionId} cannot be handed off: ${rendered.reason}`);
      const paths = memoryPathsOf(d.memoryRoot, session.projectId, sessionId);
      const committed = d.versions.versions(relative(paths.root, paths.checkpoint));
      const checkpointVersion = rendered.basis === 'messages' || committed === 0 ? null : committed;
      const expiresAt = d.clock.now() + (req.ttl_ms ?? d.ttlMs);
      const grant = {
        token_digest: digest,
        expires_at: expiresAt,
        to,
        model,
        checkpoint_version: checkpointVersion,
        watermark: rendered.watermark,
        basis: rendered.basis,
        writer,
        context: rendered.context,
        ...(req.kind === 'resume' ? { kind: 'resume' as const } : {}),
      };
      // Both in one event-loop turn, so one commit holds them (an index entry without its grant is an unknown token).
      await Promise.all([
        handoffLog(d.log).append('', [{ type: 'handoff.indexed', at: d.clock.now(), payload: { token_digest: digest, session_id: sessionId }, keys: [tokenKey(digest)] }]),
        d.sessions.append(sessionId, [{ type: 'session.handoff_granted', at: d.clock.now(), payload: grant, keys: [handoffKey(digest)] }]),
      ]);
      return {
        token,
        expires_at: expiresAt,
        from_session: sessionId,
        to,
        basis: rendered.basis,
        writer,
        checkpoint_version: checkpointVersion,
        watermark: rendered.watermark,
        context: rendered.context,
        ...(req.kind === 'resume' ? { kind: 'resume' as const } : {}),
      };
    });
  }

  /** The grant a token names, with the session it was granted on; `handoff_unknown` when there is none. */
  find(token: string): { fromSession: string; digest: string; grant: Grant } {
    const d = this.#d;
    const digest = tokenDigest(token);
    const at = d.log.keySeq(HANDOFFS_STREAM, tokenKey(digest));
    const [indexed] = at === undefined ? [] : [...handoffLog(d.log).read('', { from: at, to: at })];
    if (indexed?.type !== 'handoff.indexed') throw refusal('handoff_unknown');
    const fromSession = indexed.payload.session_id;
    const seq = d.log.keySeq(sessionStream(fromSession), handoffKey(digest));
    const [record] = seq === undefined ? [] : [...d.sessions.read(fromSession, { from: seq, to: seq })];
    if (record?.type !== 'session.handoff_granted' || record.payload.token_digest !== digest) throw refusal('handoff_unknown');
    return { fromSession, digest, grant: record.payload };
  }

  /** The lineage a session opened from `grant` records. */
  static lineageOf(fromSession: string, grant: Grant): Lineage {
    return { from_session: fromSession, kind: grant.kind ?? 'handoff', checkpoint_version: grant.checkpoint_version, watermark: grant.watermark };
  }

  /** Records in `fromSession`'s stream that `sessionId` continues it (with every successor so far). */
  async continued(fromSession: string, sessionId: string, kind: LineageKind, digest?: string): Promise<void> {
    const d = this.#d;
    await d.inMailbox(fromSession, async () => {
      const successors = [...successorsOf(d.log, fromSession), { session_id: sessionId, kind }];
      await d.sessions.append(fromSession, [
        { type: 'session.continued', at: d.clock.now(), payload: { session_id: sessionId, kind, ...(digest !== undefined ? { token_digest: digest } : {}), successors }, keys: [CONTINUED_KEY] },
      ]);
    });
  }

  #opening(sessionId: string) {
    const [first] = [...this.#d.sessions.read(sessionId, { from: 1, to: 1 })];
    if (first?.type !== 'session.opened') throw new ProtocolError('not_found', `unknown session ${sessionId}`);
    return first.payload;
  }
}

/** The sessions that continue `sessionId`, oldest first (from its newest `session.continued` record). */
export function successorsOf(log: EventLog, sessionId: string): { session_id: string; kind: LineageKind }[] {
  const stream = sessionStream(sessionId);
  const seq = log.keySeq(stream, CONTINUED_KEY);
  const [raw] = seq === undefined ? [] : [...log.read(stream, { from: seq, to: seq })];
  if (raw === undefined) return [];
  const record = checkRecord(SESSION_RECORDS, raw);
  return record.type === 'session.continued' ? record.payload.successors : [];
}

/** The lineage a session's opening recorded (undefined: none, or no such session). */
export function lineageOf(log: EventLog, sessionId: string): Lineage | undefined {
  const [raw] = [...log.read(sessionStream(sessionId), { from: 1, to: 1 })];
  if (raw === undefined) return undefined;
  const record = checkRecord(SESSION_RECORDS, raw);
  return record.type === 'session.opened' ? record.payload.lineage : undefined;
}
