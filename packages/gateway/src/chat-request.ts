import { isObjectList, modelRequestBody } from './json-body.ts';

/** A chat message as the agent sent it. */
export type ChatMessage = Readonly<Record<string, unknown>> & { readonly role: string };

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly object[] | null;
  readonly stream: boolean;
  /** Whether the agent asked for the final usage chunk of a stream itself. */
  readonly includeUsage: boolean;
  /** The parsed body, every field as sent. */
  readonly body: Readonly<Record<string, unknown>>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNullish = (v: unknown): v is null | undefined => v === null || v === undefined;

/**
 * Reads a chat-completions request body (its JSON value); null when it is not one (it is then forwarded without being recorded). What
 * the gateway reads is checked by hand — a non-empty `model`, `messages` as objects with a string `role`, `tools` as
 * objects, a boolean `stream`, `stream_options.include_usage` a boolean — and everything else passes through untouched;
 * the objects are the ones `JSON.parse` produced (key order kept), never copies: a long history is walked once.
 */
export function parseChatRequest(json: unknown): ChatRequest | null {
  const b = modelRequestBody(json);
  if (b === null) return null;
  const messages = b['messages'];
  if (!isObjectList(messages) || !messages.every((m) => typeof m['role'] === 'string')) return null;
  const tools = b['tools'];
  if (!isNullish(tools) && !isObjectList(tools)) return null;
  const stream = b['stream'];
  if (!isNullish(stream) && typeof stream !== 'boolean') return null;
  const streamOptions = b['stream_options'];
  if (!isNullish(streamOptions) && !(isObject(streamOptions) && (isNullish(streamOptions['include_usage']) || typeof streamOptions['include_usage'] === 'boolean'))) return null;
  return {
    model: b.model,
    messages: messages as ChatMessage[],
    tools: tools ?? null,
    stream: stream === true,
    includeUsage: isObject(streamOptions) && streamOptions['include_usage'] === true,
    body: b,
  };
}
