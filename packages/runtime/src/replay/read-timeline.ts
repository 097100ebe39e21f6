import {
  LogRecordError,
  SESSION_RECORDS,
  WRITER_RECORDS,
  checkRecord,
  writerStream,
  type EventLog,
  type SessionSetup,
  type StoredSessionRecord,
  type StoredWriterRecord,
} from '@baton/log-schema';
import { ReplayError } from './replay-error.ts';
import { readSessionRecords, sessionWriterIds } from './session-records.ts';

/** One record of a session's timeline: a session-stream record or one of its writers' records. */
export type TimelineEntry = (StoredSessionRecord & { readonly writerId: null }) | (StoredWriterRecord & { readonly writerId: string });

/** A session's records and its writers' records, merged in time order. */
export interface SessionTimeline {
  readonly sessionId: string;
  readonly setup: SessionSetup;
  /** `at` of `session.opened`. */
  readonly openedAt: number;
  /** Writers of the session, by writer number. */
  readonly writerIds: readonly string[];
  /**
   * All records, ordered by `at`; each stream keeps its own seq order, and on equal times the session stream comes
   * first, then writers by number.
   */
  readonly entries: readonly TimelineEntry[];
}

function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof LogRecordError) throw new ReplayError('malformed', err.message);
    throw err;
  }
}

/**
 * Reads a session's timeline from the log: its session stream and every writer stream that belongs to it, every
 * record checked against its stream's schema. Throws `ReplayError` (`not_found`, or `malformed` naming the first
 * record that does not match its schema).
 */
export function readTimeline(log: EventLog, sessionId: string): SessionTimeline {
  const session = readSessionRecords(log, sessionId);
  const writerIds = sessionWriterIds(log, session);
  const lanes: TimelineEntry[][] = [
    session.records.map((r) => ({ ...checked(() => checkRecord(SESSION_RECORDS, r)), writerId: null })),
    ...writerIds.map((id) => [...log.read(writerStream(id))].map((r) => ({ ...checked(() => checkRecord(WRITER_RECORDS, r)), writerId: id }))),
  ];
  return {
    sessionId,
    setup: session.setup,
    openedAt: session.records[0]?.at ?? 0,
    writerIds,
    entries: mergeLanes(lanes),
  };
}

/** k-way merge by `at` that never reorders a lane (a clock step backwards only delays the rest of its lane). */
function mergeLanes(lanes: readonly TimelineEntry[][]): TimelineEntry[] {
  const heads = lanes.map(() => 0);
  const out: TimelineEntry[] = [];
  for (;;) {
    let best = -1;
    let bestAt = Number.POSITIVE_INFINITY;
    for (let i = 0; i < lanes.length; i++) {
      const next = lanes[i]?.[heads[i] ?? 0];
      if (next !== undefined && next.at < bestAt) {
        best = i;
        bestAt = next.at;
      }
    }
    if (best < 0) return out;
    const lane = lanes[best] as TimelineEntry[];
    const index = heads[best] ?? 0;
    out.push(lane[index] as TimelineEntry);
    heads[best] = index + 1;
  }
}
