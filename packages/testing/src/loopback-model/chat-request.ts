import { z } from 'zod';

/*
 * The loopback server validates only the shape it relies on and keeps every other field. Parsing never transforms the
 * body: the recorded body is the `JSON.parse` result itself, so key order (and therefore the canonical serialization
 * used by the simulated prefix cache) is exactly what the client sent.
 */

const contentPartSchema = z.looseObject({ type: z.string() });

const toolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }).optional(),
});

const chatMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.null(), z.array(contentPartSchema)]).optional(),
  tool_calls: z.array(toolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});

const chatToolSchema = z.looseObject({
  type: z.string(),
  function: z
    .looseObject({
      name: z.string(),
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

/** The subset of an OpenAI chat-completions request body the loopback server checks (unknown keys are kept). */
export const chatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(chatMessageSchema).min(1),
  tools: z.array(chatToolSchema).optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
});

/** A chat-completions request body as received (validated, untransformed). */
export type ChatRequest = z.infer<typeof chatRequestSchema>;
/** One message of a {@link ChatRequest}. */
export type ChatMessage = ChatRequest['messages'][number];
/** One tool definition of a {@link ChatRequest}. */
export type ChatTool = NonNullable<ChatRequest['tools']>[number];
/** One tool call of an assistant {@link ChatMessage}. */
export type ChatToolCall = NonNullable<ChatMessage['tool_calls']>[number];

/** Concatenated text of a message content (string, or the `text` of its text parts); `''` for null/absent. */
export function contentText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    const text = (part as Record<string, unknown>)['text'];
    if (typeof text === 'string') texts.push(text);
  }
  return texts.join('\n');
}

/** Parses tool-call arguments (a JSON string) into an object; non-object or invalid JSON gives `{}`. */
export function parseToolArguments(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
