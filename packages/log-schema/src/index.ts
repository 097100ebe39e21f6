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
