import type { EventLog, StoredRecord } from '@baton/log-schema';
import type { SessionSetup } from '../host/worker-messages.ts';
import { sessionStream } from '../daemon/session-service.ts';
import { writerStream } from '../writer/writer-run.ts';
import { ReplayError } from './replay-error.ts';

/** The session stream of one session, checked to start with `session.opened`. */
export interface SessionRecords {
  readonly sessionId: string;
  readonly stream: string;
  readonly setup: SessionSetup;
  /** Every record of the session stream, `session.opened` first. */
  readonly records: readonly StoredRecord[];
}

/**
 * Reads a session stream. Throws `ReplayError('not_found')` when the session has no stream or its first record is not
 * `session.opened`, and `ReplayError('malformed')` when that record carries no setup input.
 */
export function readSessionRecords(log: EventLog, sessionId: string): SessionRecords {
  const stream = sessionStream(sessionId);
  const records = [...log.read(stream)];
  const opened = records[0];
  if (opened === undefined || opened.type !== 'session.opened') {
    throw new ReplayError('not_found', `unknown session ${sessionId}: no ${stream} stream in the event log`);
  }
  const setup = (opened.payload as { setup?: SessionSetup } | null)?.setup;
  if (setup === undefined || setup === null || typeof setup.input !== 'object' || setup.input === null) {
    throw new ReplayError('malformed', `session ${sessionId}: session.opened (seq ${opened.seq}) has no setup input`);
  }
  return { sessionId, stream, setup, records };
}

/** Writer number of `<sessionId>-w<n>` (the session machine's writer ids), or null for another id. */
function writerNumber(sessionId: string, writerId: string): number | null {
  if (!writerId.startsWith(`${sessionId}-w`)) return null;
  const n = Number(writerId.slice(sessionId.length + 2));
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Writer ids of a session: those named by its records (settlements, decisions' `writer.start` effects) plus the
 * writer streams named after it in the log, ordered by writer number (ids of another shape last, by name).
 */
export function sessionWriterIds(log: EventLog, session: SessionRecords): string[] {
  const ids = new Set<string>();
  for (const r of session.records) {
    const payload = (r.payload ?? {}) as Record<string, unknown>;
    if (r.type === 'writer.settled' && typeof payload['writerId'] === 'string') ids.add(payload['writerId']);
    if (r.type === 'decision' && Array.isArray(payload['effects'])) {
      for (const e of payload['effects'] as { kind?: unknown; writerId?: unknown }[]) {
        if (e?.kind === 'writer.start' && typeof e.writerId === 'string') ids.add(e.writerId);
      }
    }
  }
  const prefix = writerStream(`${session.sessionId}-w`);
  for (const stream of log.streams(prefix)) {
    const id = stream.slice('writer/'.length);
    if (writerNumber(session.sessionId, id) !== null) ids.add(id);
  }
  const rank = (id: string): number => writerNumber(session.sessionId, id) ?? Number.MAX_SAFE_INTEGER;
  return [...ids].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
