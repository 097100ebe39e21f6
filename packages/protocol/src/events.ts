import { z } from 'zod';
import { CountSchema, EpochMsSchema, NonEmptyStringSchema, SessionIdSchema } from './fields.ts';
import {
  RebuildOutcomeSchema,
  ReentryKindSchema,
  WriterModeSchema,
  WriterOutcomeSchema,
  WriterTriggerSchema,
} from './enums.ts';
import { WriterFailureSchema } from './replies.ts';

/*
 * Lifecycle events Baton publishes on `<prefix>.v1.session.<sid>.events`, in the encoding the session was opened
 * with. Every event is `{ type, session_id, at, ... }`. Like replies, events are parsed tolerantly: unknown keys are
 * dropped, so subscribers keep working when an event gains a field.
 */

const base = { session_id: SessionIdSchema, at: EpochMsSchema };

export const ThresholdCrossedEventSchema = z.object({
  ...base,
  type: z.literal('threshold.crossed'),
  threshold: CountSchema,
  tokens: CountSchema,
});
export type ThresholdCrossedEvent = z.infer<typeof ThresholdCrossedEventSchema>;

export const WriterStartedEventSchema = z.object({
  ...base,
  type: z.literal('writer.started'),
  writer_id: NonEmptyStringSchema,
  covers_up_to: z.string(),
  mode: WriterModeSchema,
  trigger: WriterTriggerSchema,
  /** Why the writer runs in delta mode although fork mode was asked for (no writing tool could be mapped, …). */
  reason: z.string().optional(),
});
export type WriterStartedEvent = z.infer<typeof WriterStartedEventSchema>;

export const WriterQueuedEventSchema = z.object({ ...base, type: z.literal('writer.queued') });
export type WriterQueuedEvent = z.infer<typeof WriterQueuedEventSchema>;

export const WriterReenteredEventSchema = z.object({
  ...base,
  type: z.literal('writer.reentered'),
  writer_id: NonEmptyStringSchema,
  iteration: CountSchema,
  kind: ReentryKindSchema,
});
export type WriterReenteredEvent = z.infer<typeof WriterReenteredEventSchema>;

export const WriterSettledEventSchema = z.object({
  ...base,
  type: z.literal('writer.settled'),
  writer_id: NonEmptyStringSchema,
  outcome: WriterOutcomeSchema,
  failure: WriterFailureSchema.optional(),
  /** The session's watermark after settlement (advanced only by a success). */
  watermark: z.string().nullable(),
});
export type WriterSettledEvent = z.infer<typeof WriterSettledEventSchema>;

/** Summed over the writer's own LLM calls; `cache_hit_rate` is `cache_read_tokens / total_input_tokens` in [0, 1]. */
export const WriterCachePerfEventSchema = z.object({
  ...base,
  type: z.literal('writer.cache_perf'),
  writer_id: NonEmptyStringSchema,
  /** The writer's outcome (`success`, `failure`, …). */
  status: z.string(),
  total_input_tokens: CountSchema,
  cache_read_tokens: CountSchema,
  cache_write_tokens: CountSchema,
  cache_hit_rate: z.number().min(0).max(1),
  num_llm_calls: CountSchema,
});
export type WriterCachePerfEvent = z.infer<typeof WriterCachePerfEventSchema>;

/** A status text for the agent's UI ("Writing checkpoint…"); `""` means idle. */
export const StatusEventSchema = z.object({ ...base, type: z.literal('status'), text: z.string() });
export type StatusEvent = z.infer<typeof StatusEventSchema>;

export const RebuildCompletedEventSchema = z.object({
  ...base,
  type: z.literal('rebuild.completed'),
  outcome: RebuildOutcomeSchema,
  covered_up_to: z.string().nullable(),
});
export type RebuildCompletedEvent = z.infer<typeof RebuildCompletedEventSchema>;

/** Any session event, discriminated on `type`. */
export const PublishedEventSchema = z.discriminatedUnion('type', [
  ThresholdCrossedEventSchema,
  WriterStartedEventSchema,
  WriterQueuedEventSchema,
  WriterReenteredEventSchema,
  WriterSettledEventSchema,
  WriterCachePerfEventSchema,
  StatusEventSchema,
  RebuildCompletedEventSchema,
]);
export type PublishedEvent = z.infer<typeof PublishedEventSchema>;
export type PublishedEventType = PublishedEvent['type'];

/**
 * An event as its producer states it, before the daemon stamps `session_id` and `at` on it (distributes over the
 * union, so `PublishedEventBody<'status'>` is `{ type: 'status'; text: string }`).
 */
export type PublishedEventBody<T extends PublishedEventType = PublishedEventType> = T extends PublishedEventType
  ? Omit<Extract<PublishedEvent, { type: T }>, 'session_id' | 'at'>
  : never;
