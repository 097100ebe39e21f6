/** Pure logic of the daemon's actors: the session and writer machines, their events and effects. No I/O. */
export {
  COMPACTION_BUFFER,
  OUTPUT_CAP,
  CHECKPOINT_RESERVED,
  DEFAULT_MAX_OUTPUT_TOKENS,
  ThresholdError,
  usableWindow,
  defaultLadderPercents,
  parseQuantity,
  resolveThresholds,
  type ModelLimits,
} from './thresholds.ts';
export { DEFAULT_TAIL_POLICY, computeBoundaryIndex, adjustForToolPairs, deltaStartIndex, type MessageIndexEntry, type TailPolicy } from './boundary.ts';
export {
  MessageIndexEntrySchema,
  IndexedMessageSchema,
  FailureSchema,
  SessionEventSchema,
  SessionInputSchema,
  type IndexedMessage,
  type Task,
  type Failure,
  type SessionEvent,
  type SessionInput,
} from './session-events.ts';
export {
  SESSION_EFFECT_THREAD,
  isWorkerEffect,
  isMainEffect,
  type SessionPublication,
  type WriterStartEffect,
  type SessionWorkerEffect,
  type SessionMainEffect,
  type SessionEffect,
} from './session-effects.ts';
export { initialSessionContext, slotOf, nextThreshold, isOverflow, type SessionContext, type SlotState, type RunningWriter, type LastOutcome, type RebuildInProgress } from './session-context.ts';
export { REBUILD_STATUS } from './session-rebuild.ts';
export { sessionMachine, type SessionMachine } from './session-machine.ts';
export { ToolCallSchema, ToolResultSchema, WriterEventSchema, WriterInputSchema, type ToolCall, type ToolResult, type WriterEvent, type WriterInput } from './writer-events.ts';
export { type Nudge, type WriterPerf, type WriterEffect } from './writer-effects.ts';
export { initialWriterContext, type WriterContext, type WriterPhase } from './writer-context.ts';
export { writerMachine, type WriterMachine } from './writer-machine.ts';
export { foldStart, foldEvent, type FoldStep } from './fold.ts';
