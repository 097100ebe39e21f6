import { z } from 'zod';
import { CountSchema, EpochMsSchema, NonEmptyStringSchema, OpenObjectSchema, verbatim } from './fields.ts';

/** Message roles accepted on `append` (OpenAI chat roles). */
export const MessageRoleSchema = z.enum(['user', 'assistant', 'tool', 'system']);
export type MessageRole = z.infer<typeof MessageRoleSchema>;

/**
 * Provider usage reported with a finished assistant message. Extra provider fields (`prompt_tokens_details`, …) are
 * kept, so an agent can forward the provider's usage object as it is.
 */
export const UsageSchema = z.looseObject({
  prompt_tokens: CountSchema,
  completion_tokens: CountSchema,
  total_tokens: CountSchema.optional(),
  cached_tokens: CountSchema.optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** OpenAI chat content: text, an array of content parts (kept verbatim), or `null`. */
export const MessageContentSchema = z.union([z.string(), z.array(OpenObjectSchema), z.null()], {
  error: 'expected a string, an array of objects or null',
});
export type MessageContent = z.infer<typeof MessageContentSchema>;

const MessageShapeSchema = z.looseObject({
  /** Unique in the session; re-sending the same id is a no-op (a daemon concern, not a schema one). */
  id: NonEmptyStringSchema,
  role: MessageRoleSchema,
  content: MessageContentSchema,
  // The OpenAI-native fields also accept `null`, which SDKs emit for "absent" (Python's model_dump, for one);
  // `null` means the same as a missing field.
  tool_calls: z.array(OpenObjectSchema).nullish(),
  tool_call_id: z.string().nullish(),
  name: z.string().nullish(),
  /** Absent or `"main"`: the main slice; anything else is a subagent slice. */
  agent_id: NonEmptyStringSchema.optional(),
  /** Assistant messages: present (non-null) once the message is finished. */
  finish_reason: z.string().nullish(),
  usage: UsageSchema.optional(),
  created_at: EpochMsSchema.optional(),
  /**
   * The message exactly as the session's provider API carries it, in sessions whose `api` is not `openai-chat`: one
   * Responses input item, or one Anthropic message. Baton reads the message from it and sends it to the model as it
   * is; `role` is then Baton's reading of it and `content` is null.
   */
  native: OpenObjectSchema.optional(),
});

/**
 * One conversation message as the agent sends it (docs/protocol.md `Message`).
 *
 * Validation is strict on the fields Baton reads and tolerant of anything else: unknown fields are kept, and the
 * parsed value is the very object that was decoded (same key order, same nested objects), so the writer's fork
 * prefix can reproduce the agent's request byte for byte.
 */
export const MessageSchema = verbatim(MessageShapeSchema);
export type Message = z.infer<typeof MessageShapeSchema>;

/** Envelope fields Baton adds to agent messages; everything else is sent to the model as the agent sent it. */
const ENVELOPE = new Set(['id', 'agent_id', 'finish_reason', 'usage', 'created_at']);

/**
 * The agent's message as it went to its provider: its native form when it has one (the very object), else Baton's
 * envelope fields removed and every other key in order.
 */
export function toProviderMessage(m: Message): Record<string, unknown> {
  if (m.native !== undefined) return m.native;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (!ENVELOPE.has(k)) out[k] = v;
  return out;
}
