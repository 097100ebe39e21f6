import { HANDOFF_RECORDS, HANDOFFS_STREAM, type HandoffRecordSchemas, type StoredHandoffRecord } from './handoff-records.ts';
import { COMMIT_RECORDS, type CommitRecordSchemas, type StoredCommitRecord } from './commit-records.ts';
import type { EventLog, StoredRecord } from './event-log.ts';
import { checkRecord } from './record-stream.ts';
import { SESSION_RECORDS, type SessionRecordSchemas, type StoredSessionRecord } from './session-records.ts';
import { StreamLog } from './stream-log.ts';
import { COMMITS_STREAM, parseStream, sessionStream, writerStream } from './streams.ts';
import { WRITER_RECORDS, type StoredWriterRecord, type WriterRecordSchemas } from './writer-records.ts';

/** The session streams of `log`, typed. */
export function sessionLog(log: EventLog): StreamLog<SessionRecordSchemas> {
  return new StreamLog(log, SESSION_RECORDS, sessionStream);
}

/** The writer streams of `log`, typed. */
export function writerLog(log: EventLog): StreamLog<WriterRecordSchemas> {
  return new StreamLog(log, WRITER_RECORDS, writerStream);
}

/** The commit journal of `log`, typed (its one stream has no id: pass `''`). */
export function commitLog(log: EventLog): StreamLog<CommitRecordSchemas> {
  return new StreamLog(log, COMMIT_RECORDS, () => COMMITS_STREAM);
}

/** The handoff token index of `log`, typed (its one stream has no id: pass `''`). */
export function handoffLog(log: EventLog): StreamLog<HandoffRecordSchemas> {
  return new StreamLog(log, HANDOFF_RECORDS, () => HANDOFFS_STREAM);
}

/** Any record Baton writes, told apart by the stream it is in. */
export type AnyStoredRecord =
  | ({ readonly family: 'session' } & StoredSessionRecord)
  | ({ readonly family: 'writer' } & StoredWriterRecord)
  | ({ readonly family: 'commits' } & StoredCommitRecord)
  | ({ readonly family: 'handoffs' } & StoredHandoffRecord);

/** Checks a record read from any stream against the schema of its stream; throws `LogRecordError`. */
export function checkAnyRecord(record: StoredRecord): AnyStoredRecord {
  const kind = parseStream(record.stream);
  switch (kind?.kind) {
    case 'session':
      return { family: 'session', ...checkRecord(SESSION_RECORDS, record) };
    case 'writer':
      return { family: 'writer', ...checkRecord(WRITER_RECORDS, record) };
    case 'commits':
      return { family: 'commits', ...checkRecord(COMMIT_RECORDS, record) };
    case 'handoffs':
      return { family: 'handoffs', ...checkRecord(HANDOFF_RECORDS, record) };
    case undefined:
      return checkRecord({}, record);
  }
}
