import { sessionStream } from '@baton/log-schema';
import { SESSION_ID_PATTERN } from '@baton/protocol';
import { ReplayError, readTimeline } from '@baton/runtime';
import { checkpointDiff, checkpointVersions } from './checkpoint-history.ts';
import type { InspectorData } from './inspector-data.ts';
import { InspectorError } from './inspector-error.ts';
import { rebuiltContext } from './rebuilt-context.ts';
import { sessionRevision, sessionView } from './session-view.ts';
import { sessionRows } from './session-rows.ts';

/** The JSON routes, all read-only. */
export const API_ROUTES = [
  'GET /api/sessions',
  'GET /api/sessions/<id>',
  'GET /api/sessions/<id>/revision',
  'GET /api/sessions/<id>/checkpoints/<version>',
  'GET /api/sessions/<id>/rebuilds/<number>',
] as const;

function sessionIdOf(raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new InspectorError(400, `not a session id: ${raw}`);
  }
  if (!SESSION_ID_PATTERN.test(id)) throw new InspectorError(400, `not a session id: ${JSON.stringify(id)} (expected [A-Za-z0-9_-], 1 to 128 characters)`);
  return id;
}

function positive(raw: string, what: string): number {
  const match = /^v?(\d{1,9})$/.exec(raw);
  const n = match === null ? 0 : Number(match[1]);
  if (n < 1) throw new InspectorError(400, `not a ${what}: ${JSON.stringify(raw)} (expected 1, 2, …)`);
  return n;
}

/** Throws a 404 for a session the log has no stream of. */
function knownSession(data: InspectorData, sessionId: string): void {
  if (data.log.lastSeq(sessionStream(sessionId)) === 0) throw new InspectorError(404, `unknown session ${sessionId}: the event log in ${data.dataDir} has no such session`);
}

function notFoundAsInspectorError<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ReplayError && err.code === 'not_found') throw new InspectorError(404, err.message);
    throw err;
  }
}

/**
 * Answers one API path (`/api/…`, without the query) with the value to send as JSON.
 *
 * @throws InspectorError 400 for a malformed path or id, 404 for a route, session, version or rebuild that does not
 *   exist.
 */
export async function answerApi(data: InspectorData, pathname: string): Promise<unknown> {
  const parts = pathname.split('/').filter((p) => p !== '');
  if (parts[0] !== 'api') throw new InspectorError(404, `no API route ${pathname}`);
  const [, collection, rawId, sub, rawArg] = parts;
  if (collection !== 'sessions' || parts.length > 5) throw new InspectorError(404, `no API route ${pathname} (routes: ${API_ROUTES.join(', ')})`);
  if (rawId === undefined) return { dataDir: data.dataDir, sessions: sessionRows(data.log) };
  const sessionId = sessionIdOf(rawId);
  knownSession(data, sessionId);
  if (sub === undefined) {
    const session = notFoundAsInspectorError(() => sessionView(data.log, sessionId));
    return { session, checkpoints: await checkpointVersions(data, sessionId) };
  }
  if (sub === 'revision' && rawArg === undefined) return { revision: sessionRevision(data.log, sessionId) };
  if (sub === 'checkpoints' && rawArg !== undefined) return await checkpointDiff(data, sessionId, positive(rawArg, 'checkpoint version'));
  if (sub === 'rebuilds' && rawArg !== undefined) {
    const number = positive(rawArg, 'rebuild number');
    return rebuiltContext(notFoundAsInspectorError(() => readTimeline(data.log, sessionId)), number);
  }
  throw new InspectorError(404, `no API route ${pathname} (routes: ${API_ROUTES.join(', ')})`);
}
