import { sessionStream, type SessionRecordSchemas, type StreamLog } from '@baton/log-schema';
import { DEFAULT_PROVIDER_API, ProtocolError, type Encoding, type Inherited, type Lineage, type OpenReply, type OpenRequest } from '@baton/protocol';
import { contextIn, handoffSessionId, refusal, SessionHandoffs } from './session-handoffs.ts';
import { sessionOwner } from './session-owner.ts';

type Body<T> = Omit<T, 'ok'>;

/** What opening with a handoff token needs of the session service besides the handoffs. */
export interface HandoffOpenDeps {
  /** Opens (resumes) an existing session as a plain `open` naming it would. */
  resume(req: OpenRequest, encoding: Encoding, scope: string | undefined): Promise<Body<OpenReply>>;
  /** Creates the session in its mailbox with this opening; null when it exists already (a concurrent claim made it). */
  create(sessionId: string, req: OpenRequest, encoding: Encoding, extra: { lineage: Lineage; inherited: Inherited }): Promise<Body<OpenReply> | null>;
}

/** The request as the new session records it: the token left out (it is never stored), the project the old session's. */
function recordedRequest(req: OpenRequest, projectId: string, sessionId?: string): OpenRequest {
  const { handoff: _token, session_id: _id, ...rest } = req;
  return { ...rest, project_id: projectId, ...(sessionId !== undefined ? { session_id: sessionId } : {}) };
}

/** The inherited context and lineage a session's opening recorded. */
function recordedStart(sessions: StreamLog<SessionRecordSchemas>, sessionId: string): { inherited?: Inherited; lineage?: Lineage } {
  const [opened] = [...sessions.read(sessionId, { from: 1, to: 1 })];
  if (opened?.type !== 'session.opened') return {};
  const { lineage, setup } = opened.payload;
  return {
    ...(lineage !== undefined ? { lineage } : {}),
    ...(lineage !== undefined && setup.inherited !== undefined ? { inherited: { from_session: lineage.from_session, context: setup.inherited } } : {}),
  };
}

/**
 * `open` with a handoff token: the grant is found by the token's digest; the first claim opens the new session (its id
 * derived from the digest) bound to the request's owner, with the lineage and the inherited context in its opening; a
 * later claim by the same owner resumes that session, by another owner it is refused (`handoff_used`); an unclaimed
 * token past its expiry is refused (`handoff_expired`). The old session is not touched but for the `session.continued`
 * record of its successor.
 */
export async function openWithHandoff(
  handoffs: SessionHandoffs,
  req: OpenRequest & { handoff: string },
  encoding: Encoding,
  scope: string | undefined,
  deps: HandoffOpenDeps,
): Promise<Body<OpenReply>> {
  const { log, sessions, clock } = handoffs.deps;
  if (req.session_id !== undefined) throw new ProtocolError('bad_request', 'invalid request: an open with a handoff token names no session_id', [{ path: 'session_id', message: 'must be absent with handoff' }]);
  const { fromSession, digest, grant } = handoffs.find(req.handoff);
  const projectId = handoffs.deps.projectOf(fromSession);
  // A project's subjects know nothing of another project's grants.
  if (projectId === null || (scope !== undefined && projectId !== scope)) throw refusal('handoff_unknown');
  const sessionId = handoffSessionId(digest);
  const resume = async (): Promise<Body<OpenReply>> => {
    if ((sessionOwner(log, sessionId) ?? undefined) !== req.owner) throw refusal('handoff_used');
    const reply = await deps.resume(recordedRequest(req, projectId, sessionId), encoding, scope);
    return { ...reply, ...recordedStart(sessions, sessionId) };
  };
  if (log.lastSeq(sessionStream(sessionId)) > 0) return await resume();
  if (grant.expires_at <= clock.now()) throw refusal('handoff_expired');
  const inherited: Inherited = { from_session: fromSession, context: contextIn(grant.context, req.api ?? DEFAULT_PROVIDER_API) };
  const lineage = SessionHandoffs.lineageOf(fromSession, grant);
  const created = await deps.create(sessionId, recordedRequest(req, projectId), encoding, { lineage, inherited });
  if (created === null) return await resume();
  await handoffs.continued(fromSession, sessionId, lineage.kind, digest);
  return created;
}

