import type { ProviderApi } from '@baton/protocol';

/** One model reply, whatever the API: what the writer machine consumes. */
export interface WriterModelReply {
  readonly content: string | null;
  readonly reasoning: string | null;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  /** Chat's vocabulary: `stop`, `tool_calls`, `length`, … */
  readonly finishReason: string | null;
  readonly usage: { readonly prompt: number; readonly completion: number; readonly cached: number };
}

/** A tool's output going back to the model. */
export interface WriterToolOutput {
  readonly id: string;
  readonly name: string;
  readonly output: string;
}

/**
 * A writer's conversation with its model, in the session's API: the forked prefix, then Baton's turns and the model's
 * replies, each kept in that API's own shape so every request repeats the one before byte for byte.
 */
export interface WriterModel {
  readonly api: ProviderApi;
  /** Adds a user turn of text (the writer task, a reminder, a reflection). */
  addUser(text: string): void;
  /** Adds the outputs of the last reply's tool calls. */
  addToolOutputs(outputs: readonly WriterToolOutput[]): void;
  /** Sends the conversation so far; the reply joins it. */
  call(signal: AbortSignal): Promise<WriterModelReply>;
}

/** What a writer's requests are made of besides the conversation. */
export interface WriterRequest {
  readonly model: string;
  /** Responses `instructions` / Anthropic `system` (chat carries its system messages in the prefix). */
  readonly system: string | readonly string[] | readonly object[] | null;
  /** The forked prefix (or the delta slice) as the provider gets it. */
  readonly prefix: readonly Record<string, unknown>[];
  readonly tools: readonly unknown[];
  /** Other fields of the agent's requests (fork mode). */
  readonly params: Readonly<Record<string, unknown>>;
  /** Extra request headers (never credentials). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Fields of a request the writer sets itself: an agent's value for them is not copied. (Responses `instructions` is
 * carried: a session whose system prompt is items keeps the agent's instructions there.)
 */
const OWN_FIELDS = new Set(['model', 'messages', 'input', 'system', 'tools', 'stream', 'stream_options', 'previous_response_id', 'conversation', 'store', 'background']);

/** The agent's other request fields a writer sends as the agent does. */
export function carriedParams(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([k]) => !OWN_FIELDS.has(k)));
}
