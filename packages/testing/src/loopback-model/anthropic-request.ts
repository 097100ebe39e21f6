import { z } from 'zod';

/*
 * The subset of an Anthropic Messages request the loopback server checks; every other field (`tool_choice`,
 * `thinking`, `metadata`, `temperature`, `stop_sequences`, …) is accepted and kept, and any block may carry
 * `cache_control`. Parsing never transforms: the recorded body is the `JSON.parse` result itself.
 */

/** Block types with a checked shape; any other `type` (image, document, server tool results, …) is accepted. */
const KNOWN_BLOCK_TYPES = new Set(['text', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

const cacheControl = z.looseObject({ type: z.string() }).nullable().optional();

const textBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });

const toolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

const toolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});

const thinkingBlockSchema = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string(), cache_control: cacheControl });

const redactedThinkingBlockSchema = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string(), cache_control: cacheControl });

const otherBlockSchema = z.looseObject({
  type: z.string().refine((t) => !KNOWN_BLOCK_TYPES.has(t), 'malformed content block'),
  cache_control: cacheControl,
});

const blockSchema = z.union([
  textBlockSchema,
  toolUseBlockSchema,
  toolResultBlockSchema,
  thinkingBlockSchema,
  redactedThinkingBlockSchema,
  otherBlockSchema,
]);

// `system` messages in the list are accepted too: the Anthropic SDK in this repository models them.
const messageSchema = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(blockSchema)]),
});

const toolSchema = z.looseObject({
  name: z.string(),
  type: z.string().nullable().optional(),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  cache_control: cacheControl,
});

const systemSchema = z.union([z.string(), z.array(textBlockSchema)]);

const countTokensShape = {
  model: z.string(),
  system: systemSchema.optional(),
  messages: z.array(messageSchema).min(1),
  tools: z.array(toolSchema).optional(),
};

/** The subset of an Anthropic `POST /v1/messages` body the loopback server checks (unknown keys are kept). */
export const anthropicRequestSchema = z.looseObject({
  ...countTokensShape,
  max_tokens: z.number().int().nonnegative(),
  stream: z.boolean().optional(),
});

/** The body of `POST /v1/messages/count_tokens`: the same without `max_tokens`. */
export const anthropicCountTokensSchema = z.looseObject(countTokensShape);

/** A Messages request body as received (validated, untransformed). */
export type AnthropicRequest = z.infer<typeof anthropicRequestSchema>;
/** The parts of a request the prompt is made of (also all a `count_tokens` body needs). */
export type AnthropicPrompt = z.infer<typeof anthropicCountTokensSchema>;
/** One message of an {@link AnthropicRequest}. */
export type AnthropicMessage = AnthropicRequest['messages'][number];
/** One content block of an {@link AnthropicMessage}. */
export type AnthropicBlock = z.infer<typeof blockSchema>;
