import {
  DEFAULT_WAITS,
  MessageRoleSchema,
  RebuildReasonSchema,
  TaskItemSchema,
  WriterFailureSchema,
  WriterOutcomeSchema,
  type TaskItem,
} from '@baton/protocol';
import { z } from 'zod';

/**
 * Events the session actor consumes. Each is appended to the session's log stream before the actor sees it; the
 * record's `type` equals the event's `type` and its payload is the rest of the event.
 */

export const MessageIndexEntrySchema = z.object({
  id: z.string().min(1),
  role: MessageRoleSchema,
  tokens: z.number().int().nonnegative(),
  textual: z.boolean(),
  finished: z.boolean(),
  toolCallIds: z.array(z.string()),
  /** Images the message carries (not in `tokens`: a provider counts an image by its size, not its bytes). */
  images: z.number().int().nonnegative().optional(),
});

/** Indexed form of one appended message (bodies stay in the log, never in the actor's context). */
export const IndexedMessageSchema = MessageIndexEntrySchema.extend({
  /** Part of the main slice (no agent id, or `main`). */
  main: z.boolean(),
  /** Provider usage total of a finished assistant message, when reported. */
  usageTotal: z.number().int().nonnegative().nullable(),
  /** The prompt tokens of that usage: what the provider counted for the request this message answered. */
  usagePrompt: z.number().int().nonnegative().nullable().optional(),
});
export type IndexedMessage = z.infer<typeof IndexedMessageSchema>;

/** A task of the agent's task tree (the protocol's `tasks` item). */
export type Task = TaskItem;

/** A writer failure as the actors record it: the wire's `{ kind, retryable }` plus a message for logs and replay. */
export const FailureSchema = WriterFailureSchema.extend({
  message: z.string().optional(),
  /** A validation failure: the rules the draft broke (the next writer is told how to meet them). */
  rules: z.array(z.string()).optional(),
});
export type Failure = z.infer<typeof FailureSchema>;

/**
 * What a fitted rebuild tells the session besides its boundary and tail: the new token counts of tail messages whose
 * outputs it cleared or cut (so the index counts what the agent will send), and whether the messages no checkpoint
 * covers took so much of the window that a writer should catch up now.
 */
/** What wrote a compaction's summary: the model, or Baton's extractive fallback without a model call. */
export const CompactionSourceSchema = z.enum(['model', 'extractive']);

const FittedTailFields = {
  adjusted: z.array(z.object({ id: z.string(), tokens: z.number().int().nonnegative(), images: z.number().int().nonnegative().optional() })).optional(),
  catchUp: z.boolean().optional(),
};

export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session.resumed') }),
  z.object({ type: z.literal('messages.appended'), messages: z.array(IndexedMessageSchema) }),
  z.object({ type: z.literal('tasks.replaced'), tasks: z.array(TaskItemSchema) }),
  z.object({ type: z.literal('checkpoint.requested'), requestId: z.string() }),
  z.object({
    type: z.literal('writer.settled'),
    writerId: z.string(),
    outcome: WriterOutcomeSchema,
    failure: FailureSchema.optional(),
    reason: z.string().optional(),
  }),
  z.object({
    type: z.literal('close.requested'),
    requestId: z.string(),
    /** How long a running writer is awaited before it is cancelled (logs written before this field: 120 s). */
    waitMs: z.number().int().nonnegative().default(DEFAULT_WAITS.closeMs),
  }),
  /** The daemon stops taking work: a queued request is dropped and no new writer starts until the session resumes. */
  z.object({ type: z.literal('drain.requested') }),
  /** The drain belonged to a daemon process that is gone: writers may start again (a daemon that loads the session). */
  z.object({ type: z.literal('drain.lifted') }),
  z.object({
    type: z.literal('rebuild.requested'),
    requestId: z.string(),
    reason: RebuildReasonSchema,
    /** How long a writer may be awaited when no usable checkpoint exists. */
    waitMs: z.number().int().nonnegative(),
    /**
     * How long an in-flight writer is awaited when a usable checkpoint exists (never longer than `waitMs`; logs
     * written before this field: 30 s).
     */
    inFlightWaitMs: z.number().int().nonnegative().default(DEFAULT_WAITS.rebuildInFlightMs),
    /** checkpoint.md exists on disk (observed by the runtime when the request arrived). */
    checkpointExists: z.boolean(),
    /**
     * The provider refused the request the agent sent as longer than its window, and counted it as `tokens` (null when
     * its error did not say): the session's calibration learns from it before the rebuild is fitted.
     */
    providerRefused: z.object({ tokens: z.number().int().positive().nullable() }).optional(),
    /**
     * The rebuilt context is read on another machine than the memory files (an agent behind a remote gateway): it is
     * rendered without their paths. Absent: with them.
     */
    selfContained: z.boolean().optional(),
  }),
  z.object({ type: z.literal('timer.fired'), timerId: z.string() }),
  /** A rebuild whose requester is gone (the daemon restarted while it ran): dropped without an answer. */
  z.object({ type: z.literal('rebuild.abandoned'), requestId: z.string(), reason: z.string() }),
  z.object({
    type: z.literal('rebuild.rendered'),
    requestId: z.string(),
    ok: z.boolean(),
    reason: z.string().optional(),
    /** The boundary message Baton inserted, and the ids of the preserved tail that follows it. */
    boundary: MessageIndexEntrySchema.optional(),
    tailIds: z.array(z.string()),
    ...FittedTailFields,
  }),
  z.object({
    type: z.literal('rebuild.compacted'),
    requestId: z.string(),
    source: CompactionSourceSchema,
    boundary: MessageIndexEntrySchema,
    tailIds: z.array(z.string()),
    ...FittedTailFields,
  }),
]);
export type SessionEvent = z.infer<typeof SessionEventSchema>;

export type CompactionSource = z.infer<typeof CompactionSourceSchema>;

/** Input of the session actor: the payload of the stream's first record, `session.opened`. */
export const SessionInputSchema = z.object({
  sessionId: z.string(),
  projectId: z.string(),
  usableWindow: z.number().int().nonnegative(),
  thresholds: z.array(z.number().int().positive()),
  /** `usable − reserved`: the highest a rung (or the recovery gate) may be. */
  maxAllowed: z.number().int(),
  checkpointEnabled: z.boolean(),
  memoryWriteDisabled: z.boolean(),
  /** Fork mode requested and possible (a writing tool could be mapped). */
  fork: z.boolean(),
  /** Why the writer runs in delta mode although fork mode was requested, if so. */
  forkUnavailableReason: z.string().nullable(),
  tail: z.object({ minTokens: z.number().int(), maxTokens: z.number().int(), minTextMessages: z.number().int() }),
  /** The model's context window as declared at `open` (absent in sessions recorded before it was kept). */
  contextWindow: z.number().int().nonnegative().optional(),
  /** Baton's count of what every request carries besides the messages: the system prompt and the tool definitions (absent: 0). */
  overheadTokens: z.number().int().nonnegative().optional(),
  /**
   * The session started from a checkpoint it inherited from the session it continues (absent: false): that checkpoint
   * can be rendered before a writer of this session set a watermark (the whole context is then the tail).
   */
  inheritedCheckpoint: z.boolean().optional(),
});
export type SessionInput = z.infer<typeof SessionInputSchema>;
