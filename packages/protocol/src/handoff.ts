import { z } from 'zod';
import { CountSchema, EpochMsSchema, LineageKindSchema, SessionIdSchema } from './fields.ts';
import { ProviderApiSchema } from './enums.ts';
import { MessageSchema } from './messages.ts';
import { ModelInfoSchema } from './requests.ts';

/*
 * Continuing a session elsewhere (additive to v1): the `handoff` request, the token it grants, and the lineage a
 * session records of where it came from (a handoff, a new slice of one conversation, or an agent's resume).
 */

/** Default bounded wait for a running writer before a handoff uses the checkpoint it has. */
export const DEFAULT_HANDOFF_WAIT_MS = 30_000;
/** Default life of a handoff token (the daemon's `handoffTtlMs` may change it). */
export const DEFAULT_HANDOFF_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * `session.<sid>.handoff`: grant a one-time token that opens a new session continuing this one, in `to` (default: the
 * session's API) for `model` (default: the session's). `wait_ms` bounds the wait for a running writer, `ttl_ms` the
 * token's life (default: the daemon's).
 */
export const HandoffRequestSchema = z.strictObject({
  /** What the new session records as its lineage: `handoff` (default), or `resume` (its own agent started over). */
  kind: z.enum(['handoff', 'resume']).optional(),
  to: ProviderApiSchema.optional(),
  model: ModelInfoSchema.optional(),
  wait_ms: CountSchema.optional(),
  ttl_ms: z.int().positive().optional(),
});
export type HandoffRequest = z.infer<typeof HandoffRequestSchema>;

/** What the context was rendered from: the checkpoint alone, the checkpoint and the messages after its watermark, or messages only (no checkpoint yet). */
export const HandoffBasisSchema = z.enum(['checkpoint', 'checkpoint+messages', 'messages']);
export type HandoffBasis = z.infer<typeof HandoffBasisSchema>;

/** The writer at handoff time: none ran, one ran and was awaited, or one still runs (the wait ran out). */
export const HandoffWriterSchema = z.enum(['none', 'awaited', 'still_running']);
export type HandoffWriter = z.infer<typeof HandoffWriterSchema>;

export const HandoffReplySchema = z.object({
  ok: z.literal(true),
  token: z.string(),
  expires_at: EpochMsSchema,
  /** The session the handoff continues (the one asked). */
  from_session: SessionIdSchema.optional(),
  /** The API and model the context was rendered for. */
  to: ProviderApiSchema.optional(),
  basis: HandoffBasisSchema,
  writer: HandoffWriterSchema,
  checkpoint_version: CountSchema.nullable(),
  watermark: z.string().nullable(),
  /** The rendered, self-contained context in the `to` API, to insert after the new agent's system prompt. */
  context: z.array(MessageSchema),
});
export type HandoffReply = z.infer<typeof HandoffReplySchema>;

/** What `open` with a handoff token adds to its reply: the session continued and the context to insert. */
export const InheritedSchema = z.object({ from_session: SessionIdSchema, context: z.array(MessageSchema) });
export type Inherited = z.infer<typeof InheritedSchema>;

/** Why an `open` with a handoff token is refused (`forbidden`, `details.reason`). */
export const HandoffRefusalSchema = z.enum(['handoff_unknown', 'handoff_expired', 'handoff_used']);
export type HandoffRefusal = z.infer<typeof HandoffRefusalSchema>;

/** A session that continues another, as `runtime.sessions` and the inspector list the other's successors. */
export const SuccessorSchema = z.object({ session_id: SessionIdSchema, kind: LineageKindSchema });
export type Successor = z.infer<typeof SuccessorSchema>;
