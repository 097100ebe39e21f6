import { z } from 'zod';

/*
 * The subset of an OpenAI Responses request the loopback server checks; every other field (`store`, `include`,
 * `prompt_cache_key`, `reasoning`, `text`, `tool_choice`, `previous_response_id`, …) is accepted and kept. Like the
 * chat schema, parsing never transforms: the recorded body is the `JSON.parse` result itself.
 */

const partSchema = z.looseObject({ type: z.string() });
const contentSchema = z.union([z.string(), z.array(partSchema)]);

/** Item types with a checked shape; any other `type` is accepted as it is. */
const KNOWN_ITEM_TYPES = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);

const messageItemSchema = z.looseObject({
  type: z.literal('message').optional(),
  role: z.string(),
  content: contentSchema,
});

const functionCallSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  id: z.string().optional(),
});

const functionCallOutputSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string(),
  output: contentSchema,
});

const reasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(partSchema).optional(),
  encrypted_content: z.string().nullable().optional(),
});

const otherItemSchema = z.looseObject({ type: z.string().refine((t) => !KNOWN_ITEM_TYPES.has(t), 'malformed item') });

const inputItemSchema = z.union([messageItemSchema, functionCallSchema, functionCallOutputSchema, reasoningItemSchema, otherItemSchema]);

const toolSchema = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** The subset of an OpenAI Responses request body the loopback server checks (unknown keys are kept). */
export const responsesRequestSchema = z.looseObject({
  model: z.string(),
  instructions: z.string().nullable().optional(),
  input: z.union([z.string(), z.array(inputItemSchema)]).optional(),
  tools: z.array(toolSchema).optional(),
  stream: z.boolean().nullable().optional(),
});

/** A Responses request body as received (validated, untransformed). */
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
/** One input item of a {@link ResponsesRequest}. */
export type ResponsesInputItem = z.infer<typeof inputItemSchema>;
