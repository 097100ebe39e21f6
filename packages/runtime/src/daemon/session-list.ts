import { LogRecordError, SESSION_RECORDS, checkRecord, parseStream, sessionStream, type EventLog, type SessionRecord } from '@baton/log-schema';
import {
  DEFAULT_SESSIONS_PAGE,
  SESSION_ID_PATTERN,
  WriterOutcomeSchema,
  type FailureKind,
  type RuntimeSession,
  type RuntimeSessionsReply,
  type RuntimeSessionsRequest,
  type Successor,
  type SessionOutcome,
} from '@baton/protocol';
import { successorsOf } from './session-handoffs.ts';
import type { SessionSummary } from '../host/worker-messages.ts';
import { stateOf } from './state-of.ts';

/** What the daemon knows of its sessions in memory: the live summaries and the quarantined sessions' errors. */
export interface LiveSessions {
  readonly resident: ReadonlyMap<string, SessionSummary>;
  readonly quarantined: ReadonlyMap<string, { readonly message: string }>;
  /** Sessions an embedded gateway could not record its latest calls into (they are sent again with the next call). */
  readonly recordingStalled?: ReadonlySet<string>;
}

/** How the last writer settled, as the session machine records it (in its summary and in its decisions). */
interface RecordedOutcome {
  readonly writerId: string;
  readonly outcome: string;
  readonly failure: { readonly kind: FailureKind; readonly retryable: boolean } | null;
  readonly reason: string | null;
}

type DecisionRecord = Extract<SessionRecord, { type: 'decision' }>;

/** Records read at a time when a stream is read backwards: small first (the newest decision is usually near the end). */
const FIRST_CHUNK = 8;
const MAX_CHUNK = 256;

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The wire form of a recorded outcome; undefined (unknown) for an outcome this version does not know. */
function wireOutcome(o: RecordedOutcome | null): SessionOutcome | null | undefined {
  if (o === null) return null;
  const outcome = WriterOutcomeSchema.safeParse(o.outcome);
  if (!outcome.success) return undefined;
  return {
    writer_id: o.writerId,
    outcome: outcome.data,
    ...(o.failure !== null ? { failure: { kind: o.failure.kind, retryable: o.failure.retryable } } : {}),
    ...(o.reason !== null ? { reason: o.reason } : {}),
  };
}

/**
 * The newest `decision` record of a stream, read from its end backwards in growing chunks (nothing is folded), or
 * null when the stream has none. Throws `LogRecordError` when that decision does not match its schema.
 */
export function newestDecision(log: EventLog, stream: string): DecisionRecord | null {
  let chunk = FIRST_CHUNK;
  for (let to = log.lastSeq(stream); to >= 1; ) {
    const from = Math.max(1, to - chunk + 1);
    const records = [...log.read(stream, { from, to })];
    for (let i = records.length - 1; i >= 0; i--) {
      const raw = records[i];
      if (raw?.type !== 'decision') continue;
      const record = checkRecord(SESSION_RECORDS, raw);
      if (record.type === 'decision') return record;
    }
    to = from - 1;
    chunk = Math.min(chunk * 4, MAX_CHUNK);
  }
  return null;
}

function readError(err: unknown): string {
  if (err instanceof LogRecordError) return err.message;
  throw err;
}

/**
 * One session as `runtime.sessions` lists it: its setup from `session.opened` (seq 1), then its live summary when it
 * is resident, else the state its newest decision recorded (none: setup only). A record that fails its schema is
 * reported in `error`, never thrown: one broken session does not hide the others.
 */
function describeSession(log: EventLog, sessionId: string, live: LiveSessions): RuntimeSession {
  const stream = sessionStream(sessionId);
  const quarantine = live.quarantined.get(sessionId);
  const errors: string[] = quarantine !== undefined ? [quarantine.message] : [];
  let setup: Pick<RuntimeSession, 'project_id' | 'model' | 'opened_at' | 'lineage'> = { project_id: null, model: null, opened_at: null };
  let successors: Successor[] | null = null;
  try {
    const [first] = [...log.read(stream, { from: 1, to: 1 })];
    const opened = first === undefined ? undefined : checkRecord(SESSION_RECORDS, first);
    if (opened?.type === 'session.opened') {
      const { lineage } = opened.payload;
      setup = { project_id: opened.payload.setup.projectId, model: opened.payload.setup.model, opened_at: opened.at, ...(lineage !== undefined ? { lineage } : {}) };
    } else errors.push(`${stream} does not start with session.opened`);
    const found = successorsOf(log, sessionId);
    if (found.length > 0) successors = found;
  } catch (err) {
    errors.push(readError(err));
  }
  const summary = live.resident.get(sessionId);
  let known: Pick<RuntimeSession, 'state' | 'closed' | 'last_outcome'> = { state: null, closed: false, last_outcome: null };
  if (summary !== undefined) {
    known = { state: stateOf(summary), closed: summary.closed, last_outcome: wireOutcome(summary.lastOutcome) };
  } else {
    try {
      const decision = newestDecision(log, stream);
      if (decision !== null) {
        const s = decision.payload.state;
        // `lastOutcome` is absent from decisions older than the field: unknown, so left out of the reply.
        const outcome = s.lastOutcome === undefined ? undefined : wireOutcome(s.lastOutcome);
        known = { state: stateOf(s), closed: s.closed, ...(outcome !== undefined ? { last_outcome: outcome } : {}) };
      }
    } catch (err) {
      errors.push(readError(err));
    }
  }
  const { last_outcome: lastOutcome, ...rest } = known;
  return {
    session_id: sessionId,
    ...setup,
    resident: summary !== undefined,
    quarantined: quarantine !== undefined,
    ...rest,
    ...(lastOutcome !== undefined ? { last_outcome: lastOutcome } : {}),
    ...(live.recordingStalled?.has(sessionId) === true ? { recording: 'stalled' as const } : {}),
    ...(successors !== null ? { successors } : {}),
    ...(errors.length > 0 ? { error: errors.join('; ') } : {}),
  };
}

/** The ids of every session stream in the log (one key per stream is walked), ascending. */
export function sessionIds(log: EventLog): string[] {
  const ids: string[] = [];
  for (const stream of log.streams(sessionStream(''))) {
    const kind = parseStream(stream);
    if (kind?.kind === 'session' && SESSION_ID_PATTERN.test(kind.sessionId)) ids.push(kind.sessionId);
  }
  return ids.sort(byId);
}

/** The project a session was opened in, from its `session.opened` record (null: no such session, or unreadable). */
export function loggedProjectOf(log: EventLog, sessionId: string): string | null {
  try {
    const [first] = [...log.read(sessionStream(sessionId), { from: 1, to: 1 })];
    const opened = first === undefined ? undefined : checkRecord(SESSION_RECORDS, first);
    return opened?.type === 'session.opened' ? opened.payload.setup.projectId : null;
  } catch (err) {
    if (err instanceof LogRecordError) return null;
    throw err;
  }
}

/**
 * `runtime.sessions`: one page of the sessions in the log, ascending by id (ASCII order), those after `req.after`, at
 * most `req.limit` (default 100). `next` (the last id listed) is set when more sessions follow. With `projectId`
 * (a project's `sessions` subject), only that project's sessions.
 */
export function listSessions(log: EventLog, live: LiveSessions, req: RuntimeSessionsRequest, projectId?: string): Omit<RuntimeSessionsReply, 'ok' | 'daemon_id'> {
  const limit = req.limit ?? DEFAULT_SESSIONS_PAGE;
  const after = req.after;
  const all = after === undefined ? sessionIds(log) : sessionIds(log).filter((id) => id > after);
  const ids = projectId === undefined ? all : all.filter((id) => loggedProjectOf(log, id) === projectId);
  const page = ids.slice(0, limit);
  const last = page.at(-1);
  return {
    sessions: page.map((id) => describeSession(log, id, live)),
    ...(ids.length > limit && last !== undefined ? { next: last } : {}),
  };
}
