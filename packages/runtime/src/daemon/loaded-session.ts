import { DEFAULT_PROVIDER_API, type Encoding, type ProtocolError, type ProviderApi } from '@baton/protocol';
import type { FoldReply, SessionSummary } from '../host/worker-messages.ts';
import type { SessionLoad } from './session-load.ts';

/** What the main thread keeps of a resident session: how to answer it. Its state lives in its actor, in a worker. */
export interface LoadedSession {
  readonly sessionId: string;
  readonly projectId: string;
  /** The encoding the session was opened with: its events are published in it. */
  readonly encoding: Encoding;
  /** The agent's provider API: the form its messages must have. */
  readonly api: ProviderApi;
  readonly thresholds: readonly number[];
  /** The actor's summary after its latest fold (as the worker reported it). */
  summary: SessionSummary;
  /** Requests waiting for a `reply` / `rebuild.reply` effect. */
  readonly replies: Map<string, (body: Record<string, unknown> | ProtocolError) => void>;
  /** Inputs folded since the last snapshot was queued. */
  sinceSnapshot: number;
  lastUsedAt: number;
}

/** Answers the request `requestId` of a session waits for (nothing when none waits). */
export function answerWaiting(session: LoadedSession, requestId: string, body: Record<string, unknown>): void {
  const resolve = session.replies.get(requestId);
  session.replies.delete(requestId);
  resolve?.(body);
}

/** The main thread's record of a session just loaded from `load`, whose actor first answered `reply`. */
export function newLoadedSession(sessionId: string, load: SessionLoad, reply: FoldReply, now: number): LoadedSession {
  return {
    sessionId,
    projectId: load.setup.projectId,
    encoding: load.encoding,
    api: load.setup.api ?? DEFAULT_PROVIDER_API,
    thresholds: load.setup.input.thresholds,
    summary: reply.summary,
    replies: new Map(),
    sinceSnapshot: load.records.length,
    lastUsedAt: now,
  };
}

/** Answers every request the session waits for with `error` (the session is leaving this daemon). */
export function failAllWaiting(session: LoadedSession, error: ProtocolError): void {
  for (const resolve of session.replies.values()) resolve(error);
  session.replies.clear();
}
