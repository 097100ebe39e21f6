import {
  LogRecordError,
  SESSION_RECORDS,
  checkRecord,
  sessionStream,
  sessionWritersPrefix,
  type EventLog,
  type SessionSetup,
  type StoredRecord,
  type StoredSessionRecord,
} from '@baton/log-schema';
import { ReplayError } from './replay-error.ts';

/** The session stream of one session, checked to start with `session.opened`. */
export interface SessionRecords {
  readonly sessionId: string;
  readonly stream: string;
  readonly setup: SessionSetup;
  /** Every record of the session stream as stored, `session.opened` first (checked one by one by their readers). */
  readonly records: readonly StoredRecord[];
}

/**
 * Reads a session stream. Throws `ReplayError('not_found')` when the session has no stream or its first record is not
 * `session.opened`, and `ReplayError('malformed')` when that record does not match its schema.
 */
export function readSessionRecords(log: EventLog, sessionId: string): SessionRecords {
  const stream = sessionStream(sessionId);
  const records = [...log.read(stream)];
  const opened = records[0];
  if (opened === undefined || opened.type !== 'session.opened') {
    throw new ReplayError('not_found', `unknown session ${sessionId}: no ${stream} stream in the event log`);
  }
  let checked: StoredSessionRecord;
  try {
    checked = checkRecord(SESSION_RECORDS, opened);
  } catch (err) {
    if (err instanceof LogRecordError) throw new ReplayError('malformed', `session ${sessionId}: ${err.message}`);
    throw err;
  }
  if (checked.type !== 'session.opened') throw new ReplayError('not_found', `unknown session ${sessionId}`);
  return { sessionId, stream, setup: checked.payload.setup, records };
}

/** Writer number of `<sessionId>-w<n>` (the session machine's writer ids), or null for another id. */
function writerNumber(sessionId: string, writerId: string): number | null {
  if (!writerId.startsWith(`${sessionId}-w`)) return null;
  const n = Number(writerId.slice(sessionId.length + 2));
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Writer ids of a session: those named by its records (settlements, decisions' `writer.start` effects) plus the
 * writer streams named after it in the log, ordered by writer number (ids of another shape last, by name). Records
 * that do not match their schema are skipped here (verification reports them).
 */
export function sessionWriterIds(log: EventLog, session: SessionRecords): string[] {
  const ids = new Set<string>();
  for (const raw of session.records) {
    let r: StoredSessionRecord;
    try {
      r = checkRecord(SESSION_RECORDS, raw);
    } catch {
      continue;
    }
    if (r.type === 'writer.settled') ids.add(r.payload.writerId);
    if (r.type === 'decision') for (const e of r.payload.effects) if (e.kind === 'writer.start') ids.add(e.writerId);
  }
  const prefix = sessionWritersPrefix(session.sessionId);
  for (const stream of log.streams(prefix)) {
    const id = stream.slice('writer/'.length);
    if (writerNumber(session.sessionId, id) !== null) ids.add(id);
  }
  const rank = (id: string): number => writerNumber(session.sessionId, id) ?? Number.MAX_SAFE_INTEGER;
  return [...ids].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
