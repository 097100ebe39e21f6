import {
  LogRecordError,
  isSessionInput,
  SNAPSHOT_KEY,
  sessionStream,
  type EventLog,
  type SessionRecordSchemas,
  type SessionSetup,
  type SessionSnapshot,
  type StoredSessionRecord,
  type StreamLog,
} from '@baton/log-schema';
import type { Encoding } from '@baton/protocol';

/** What loading a session reads from its stream: its setup, its newest snapshot, and the inputs after it. */
export interface SessionLoad {
  readonly setup: SessionSetup;
  readonly encoding: Encoding;
  readonly snapshot: SessionSnapshot | null;
  /** Input records after the snapshot (all of them without one), in order. */
  readonly records: StoredSessionRecord[];
}

const isInput = isSessionInput;

/**
 * Reads what loading a session needs, bounded by what follows its newest snapshot rather than by its history: the
 * `session.opened` record, the snapshot the `snapshot` key points at, and the input records after the seq that
 * snapshot covers. A snapshot record that does not match its schema (or `useSnapshot` false, after a snapshot failed to
 * restore) means reading every input instead: a snapshot is derived state, so losing one costs time, never data. Null
 * when the stream does not start with `session.opened`. Throws `LogRecordError` for an input record that does not
 * match its schema.
 */
export function readSessionLoad(sessions: StreamLog<SessionRecordSchemas>, log: EventLog, sessionId: string, useSnapshot = true): SessionLoad | null {
  const [opened] = [...sessions.read(sessionId, { from: 1, to: 1 })];
  if (opened?.type !== 'session.opened') return null;
  const at = useSnapshot ? log.keySeq(sessionStream(sessionId), SNAPSHOT_KEY) : undefined;
  let snapshot: SessionSnapshot | null = null;
  if (at !== undefined) {
    try {
      const [record] = [...sessions.read(sessionId, { from: at, to: at })];
      if (record?.type === 'snapshot') snapshot = record.payload;
    } catch (err) {
      if (!(err instanceof LogRecordError)) throw err;
    }
  }
  const records: StoredSessionRecord[] = [...sessions.read(sessionId, { from: (snapshot?.for ?? 1) + 1 }, isInput)];
  return { setup: opened.payload.setup, encoding: opened.payload.encoding, snapshot, records };
}
