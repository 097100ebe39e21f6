import { NO_CONTENT, UNCALIBRATED, type Calibration, type ContentCounts, type Observation } from './calibration.ts';
import { emptyIndex, type IndexList } from './index-list.ts';
import type { RebuildReason, WriterMode, WriterOutcome, WriterTrigger } from '@baton/protocol';
import type { Failure, SessionInput, Task } from './session-events.ts';

/** The writer slot: at most one running writer and at most one pending request. */
export type SlotState = 'idle' | 'running' | 'runningPending';

export interface RunningWriter {
  readonly writerId: string;
  readonly boundary: string;
  readonly mode: WriterMode;
  readonly trigger: WriterTrigger;
  /** The rung that started this writer, when a threshold did; with the count it fired at. */
  readonly rung: number | null;
  readonly firedAt: number;
}

export interface LastOutcome {
  readonly writerId: string;
  readonly outcome: WriterOutcome;
  readonly failure: Failure | null;
  readonly reason: string | null;
}

/** Session actor context. Holds the per-message index, never message bodies (those live in the log). */
export interface SessionContext {
  readonly input: SessionInput;
  /** One entry per main-slice message, in order (a persistent list: an append does not copy the whole index). */
  readonly index: IndexList;
  /** Total of the newest finished main-slice assistant message, from the agent's provider usage. */
  readonly tokens: number;
  readonly crossed: readonly number[];
  readonly watermark: string | null;
  readonly writer: RunningWriter | null;
  readonly pending: WriterTrigger | null;
  readonly writerSeq: number;
  readonly lastOutcome: LastOutcome | null;
  readonly tasks: readonly Task[];
  readonly closeRequestId: string | null;
  readonly closed: boolean;
  /** Set by a drain: no new writer starts until the session is resumed. */
  readonly draining: boolean;
  /**
   * Recovery gate: after a transient failure of the final rung's writer, the count at which the final
   * rung fires once more. Null when not armed.
   */
  readonly recoveryGate: number | null;
  /** The rebuild in progress, if any (one at a time). */
  readonly rebuild: RebuildInProgress | null;
  readonly rebuildSeq: number;
  /**
   * The newest provider usage was already recovered by a rebuild: it drives neither thresholds nor overflow until a
   * newer finished assistant message reports usage.
   */
  readonly usageRecovered: boolean;
  /** Provider tokens per Baton token by kind of content, learnt from the usage the replies reported. */
  readonly calibration: Calibration;
  /** Baton's counts of the messages of the current context, by kind (the sums of the index). */
  readonly counts: ContentCounts;
  /** The newest reported request of the current context (a rebuild starts a new context), to learn from the change. */
  readonly lastObservation: Observation | null;
  /** Prompt tokens the provider reported for the newest request, or null before any report. */
  readonly lastPromptTokens: number | null;
  /** Requests the provider counted above the model's window or refused as too long: never expected, always counted. */
  readonly overWindow: number;
  /** Writers that failed in a row (a success resets it): a rebuild asks for another only every so many overflows. */
  readonly failedWriters: number;
  /** Rebuilds since the last writer failed (what the backoff counts). */
  readonly rebuildsSinceFailure: number;
  /**
   * The boundary message a fitted rebuild inserted and asked a writer to catch up to: the writer starts with the next
   * append (the agent's request carrying the boundary has reached the provider by then, so the writer's fork of it
   * reads the provider's prompt cache), unless a writer covering it started first.
   */
  readonly catchUp: string | null;
}

/** A rebuild waiting for a writer, rendering, or compacting. */
export interface RebuildInProgress {
  readonly requestId: string;
  readonly reason: RebuildReason;
  readonly phase: 'waiting' | 'rendering' | 'compacting';
  /** `usable`: a checkpoint exists, only the in-flight writer is awaited; `needed`: the awaited writer must succeed. */
  readonly mode: 'usable' | 'needed';
  readonly writerId: string | null;
  readonly timerId: string | null;
  /** Outcome reported when the rebuild compacts. */
  readonly compactOutcome: 'compacted' | 'checkpoint-off' | 'memory-write-off';
  /** The context is rendered naming no path of the memory files (its reader cannot open them). */
  readonly selfContained?: boolean;
}

export function initialSessionContext(input: SessionInput): SessionContext {
  return {
    input,
    index: emptyIndex(),
    tokens: 0,
    crossed: [],
    watermark: null,
    writer: null,
    pending: null,
    writerSeq: 0,
    lastOutcome: null,
    tasks: [],
    closeRequestId: null,
    closed: false,
    draining: false,
    recoveryGate: null,
    rebuild: null,
    rebuildSeq: 0,
    usageRecovered: false,
    calibration: UNCALIBRATED,
    counts: NO_CONTENT,
    lastObservation: null,
    lastPromptTokens: null,
    overWindow: 0,
    failedWriters: 0,
    rebuildsSinceFailure: 0,
    catchUp: null,
  };
}

export function slotOf(ctx: SessionContext): SlotState {
  if (ctx.writer === null) return 'idle';
  return ctx.pending === null ? 'running' : 'runningPending';
}

/** The next rung to fire (the lowest that has not fired), or null. */
export function nextThreshold(ctx: SessionContext): number | null {
  // The lowest rung that has not fired: a rung passed while a writer ran stays armed and fires next; after a rebuild
  // the re-armed ladder starts from the bottom.
  return ctx.input.thresholds.find((t) => !ctx.crossed.includes(t)) ?? null;
}

export function isOverflow(ctx: SessionContext): boolean {
  return ctx.input.usableWindow > 0 && !ctx.usageRecovered && ctx.tokens >= ctx.input.usableWindow;
}
