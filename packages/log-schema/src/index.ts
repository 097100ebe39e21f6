/** The event log: the storage port every adapter implements, and the schema of every stream Baton writes. */
export type {
  EventLog,
  LogRecord,
  StoredRecord,
  AppendInput,
  AppendResult,
  ReadOptions,
  GlobalRecord,
  GlobalReadOptions,
} from './event-log.ts';
export { sessionStream, writerStream, sessionWritersPrefix, parseStream, COMMITS_STREAM, SESSION_STREAMS_PREFIX, type StreamKind } from './streams.ts';
export { LogRecordError } from './log-record-error.ts';
export { checkRecord, checkAppendInputs, type PayloadSchemas, type RecordOf, type AppendOf, type StoredOf } from './record-stream.ts';
export { StreamLog } from './stream-log.ts';
export { sessionLog, writerLog, commitLog, checkAnyRecord, type AnyStoredRecord } from './logs.ts';
export { SessionSetupSchema, type SessionSetup } from './session-setup.ts';
export {
  SESSION_RECORDS,
  DecisionStateSchema,
  type DecisionState,
  type SessionRecordSchemas,
  type SessionRecord,
  type SessionRecordType,
  type SessionAppend,
  type StoredSessionRecord,
  type SessionInputRecord,
} from './session-records.ts';
export {
  WRITER_RECORDS,
  writerRecordOf,
  type WriterRecordSchemas,
  type WriterRecord,
  type WriterRecordType,
  type WriterAppend,
  type StoredWriterRecord,
} from './writer-records.ts';
export {
  COMMIT_RECORDS,
  CommitRecordSchema,
  type CommitRecordSchemas,
  type CommitLogRecord,
  type CommitAppend,
  type StoredCommitRecord,
} from './commit-records.ts';
