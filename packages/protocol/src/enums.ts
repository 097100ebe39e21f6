import { z } from 'zod';

/*
 * The vocabularies protocol v1 shares with the daemon's actors. They are defined here once; the session and writer
 * machines, the event log and the client all derive their types from these schemas.
 */

/** How a writer run ended. */
export const WriterOutcomeSchema = z.enum(['success', 'failure', 'cancelled', 'skipped']);
export type WriterOutcome = z.infer<typeof WriterOutcomeSchema>;

/**
 * Why a writer failed: `transient` (429, 5xx, network; retryable), `overflow` (the writer's own request was too
 * long), `auth`, `validation` (structural errors left after the last re-entry), `cancelled`, `internal` (the writer's
 * executor itself failed: a bug, an event log that refused a record), `other`.
 */
export const FailureKindSchema = z.enum(['transient', 'overflow', 'auth', 'validation', 'cancelled', 'internal', 'other']);
export type FailureKind = z.infer<typeof FailureKindSchema>;

/** `fork`: the writer's request is the agent's own prefix; `delta`: Baton's tools and the messages since the watermark. */
export const WriterModeSchema = z.enum(['fork', 'delta']);
export type WriterMode = z.infer<typeof WriterModeSchema>;

/** What started a writer: a threshold rung, a `checkpoint` request, a pending request after a settlement, a rebuild. */
export const WriterTriggerSchema = z.enum(['threshold', 'manual', 'pending', 'rebuild']);
export type WriterTrigger = z.infer<typeof WriterTriggerSchema>;

/** Why the writer was called again: a validation reflection, an extraction request, or a reminder after an empty stop. */
export const ReentryKindSchema = z.enum(['validation', 'extraction', 'continuation']);
export type ReentryKind = z.infer<typeof ReentryKindSchema>;

/** The writer slot of a session: at most one running writer and one pending request. */
export const WriterSlotSchema = z.enum(['idle', 'running', 'running+pending']);
export type WriterSlot = z.infer<typeof WriterSlotSchema>;

/**
 * Why a rebuild was asked for: `overflow` (the agent's next request would not fit), `manual`, or `compaction` (the
 * agent asked its model for a summary of the conversation and is answered from the checkpoint instead).
 */
export const RebuildReasonSchema = z.enum(['overflow', 'manual', 'compaction']);
export type RebuildReason = z.infer<typeof RebuildReasonSchema>;

export const RebuildOutcomeSchema = z.enum(['rebuilt', 'compacted', 'insert-failed', 'checkpoint-off', 'memory-write-off']);
export type RebuildOutcome = z.infer<typeof RebuildOutcomeSchema>;

export const TaskStatusSchema = z.enum(['open', 'in_progress', 'blocked', 'done', 'abandoned']);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/**
 * The provider API a session's agent speaks, and so the shape of its messages and of its writers' requests:
 * OpenAI chat completions, the OpenAI Responses API, or the Anthropic Messages API.
 */
export const ProviderApiSchema = z.enum(['openai-chat', 'openai-responses', 'anthropic-messages']);
export type ProviderApi = z.infer<typeof ProviderApiSchema>;

/** The API of a session that names none. */
export const DEFAULT_PROVIDER_API: ProviderApi = 'openai-chat';
