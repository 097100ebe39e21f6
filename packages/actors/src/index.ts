/** Pure logic of the daemon's actors: the session and writer machines, their events and effects. No I/O. */
export { CHECKPOINT_RESERVED, ThresholdError, defaultReserved, usableWindow, resolveThresholds } from './thresholds.ts';
export { DEFAULT_TAIL_POLICY, computeBoundaryIndex, scaledTailPolicy, type TailPolicy } from './boundary.ts';
export {
  INDEX_CHUNK,
  appendToIndex,
  emptyIndex,
  indexEntries,
  indexFromEntries,
  indexIds,
  isIndexList,
  lastIndexEntry,
  type IndexList,
} from './index-list.ts';
export {
  MessageIndexEntrySchema,
  FailureSchema,
  CompactionSourceSchema,
  SessionEventSchema,
  SessionInputSchema,
  type IndexedMessage,
  type Task,
  type Failure,
  type CompactionSource,
  type SessionEvent,
  type SessionInput,
} from './session-events.ts';
export {
  isWorkerEffect,
  isMainEffect,
  type WriterStartEffect,
  type SessionWorkerEffect,
  type SessionMainEffect,
  type SessionEffect,
} from './session-effects.ts';
export { slotOf, nextThreshold, isOverflow, type SessionContext, type LastOutcome } from './session-context.ts';
export { sessionMachine } from './session-machine.ts';
export {
  WriterEventSchema,
  WriterInputSchema,
  type ToolCall,
  type ToolResult,
  type WriterEvent,
  type WriterInput,
} from './writer-events.ts';
export type { WriterPerf, WriterEffect } from './writer-effects.ts';
export { writerMachine } from './writer-machine.ts';
export type { WriterContext } from './writer-context.ts';
export { foldStart, foldEvent } from './fold.ts';
export {
  IMAGE_TOKENS,
  UNCALIBRATED,
  addCounts,
  calibratedTokens,
  countsOfMessage,
  observe,
  type Calibration,
  type ContentCounts,
  type Observation,
} from './calibration.ts';
