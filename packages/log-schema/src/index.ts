/** The event log: the storage port every adapter implements, and the schema of every stream Baton writes. */

// The storage port
export type {
  AppendInput,
  AppendResult,
  EventLog,
  GlobalReadOptions,
  GlobalRecord,
  LogRecord,
  ReadOptions,
  StoredRecord,
} from './event-log.ts';

// Streams, typed logs over them, and record checks
export { COMMITS_STREAM, SESSION_STREAMS_PREFIX, parseStream, sessionOfWriter, sessionStream, sessionWritersPrefix, writerStream, type StreamKind } from './streams.ts';
export { messageKey } from './message-key.ts';
export { StreamLog } from './stream-log.ts';
export { checkAnyRecord, commitLog, handoffLog, sessionLog, writerLog, type AnyStoredRecord } from './logs.ts';
export { HANDOFF_RECORDS, HANDOFFS_STREAM, tokenKey, type HandoffAppend, type HandoffRecordSchemas, type StoredHandoffRecord } from './handoff-records.ts';
export { checkAppendInputs, checkRecord } from './record-stream.ts';
export { LogRecordError } from './log-record-error.ts';

// Record schemas per stream
export type { SessionSetup } from './session-setup.ts';
export {
  SESSION_RECORDS,
  type SessionAppend,
  type SessionInputRecord,
  type SessionSnapshot,
  SessionSummarySchema,
  type SessionSummary,
  DecisionStateSchema,
  SNAPSHOT_KEY,
  OWNER_KEY,
  CONTINUED_KEY,
  NON_INPUT_RECORD_TYPES,
  handoffKey,
  isSessionInput,
  ownerSetBy,
  type SessionRecord,
  type SessionRecordSchemas,
  type StoredSessionRecord,
} from './session-records.ts';
export { WRITER_RECORDS, writerRecordOf, type StoredWriterRecord, type WriterAppend, type WriterRecord } from './writer-records.ts';
export { COMMIT_RECORDS, CommitReasonSchema, type CommitAppend, type CommitReason, type CommitRecordSchemas } from './commit-records.ts';
export { BLOBS_STREAM, BLOB_RECORDS, type BlobAppend, type BlobRecordSchemas, type StoredBlobRecord } from './blob-records.ts';
export { RECORD_PACKR_OPTIONS } from './record-encoding.ts';
