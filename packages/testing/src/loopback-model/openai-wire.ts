import { functionArguments, type ResolvedReply } from './resolve-reply.ts';
import type { ErrorSpec } from './types.ts';

/** The usage block of a completion, OpenAI-shaped. */
export interface WireUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: { readonly cached_tokens: number };
  readonly completion_tokens_details: { readonly reasoning_tokens: number };
}

/** Completion metadata shared by the JSON and SSE encodings. */
export interface CompletionMeta {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

const DEFAULT_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

function wireToolCalls(reply: ResolvedReply): object[] {
  return reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: functionArguments(c) } }));
}

/** The non-streaming `chat.completion` body. */
export function completionBody(meta: CompletionMeta, reply: ResolvedReply, usage: WireUsage): object {
  const message: Record<string, unknown> = { role: 'assistant', content: reply.content, refusal: null };
  if (reply.reasoning !== undefined) message['reasoning_content'] = reply.reasoning;
  if (reply.toolCalls.length > 0) message['tool_calls'] = wireToolCalls(reply);
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    system_fingerprint: 'loopback',
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason }],
    usage,
  };
}

/** `text` in two pieces (one when shorter than 2), so streaming clients exercise their accumulation. */
export function halves(text: string): string[] {
  if (text.length < 2) return [text];
  const cut = Math.ceil(text.length / 2);
  return [text.slice(0, cut), text.slice(cut)];
}

/**
 * The `chat.completion.chunk` events of a streamed reply: role, reasoning, content and tool-call arguments each in
 * two pieces (so clients exercise their accumulation), the finish chunk, then a usage chunk when `includeUsage`.
 */
export function streamChunks(meta: CompletionMeta, reply: ResolvedReply, usage: WireUsage, includeUsage: boolean): object[] {
  const base = { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, system_fingerprint: 'loopback' };
  const chunk = (delta: object, finish: string | null = null): object => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: reply.content === null ? null : '', refusal: null })];
  if (reply.reasoning !== undefined) for (const piece of halves(reply.reasoning)) chunks.push(chunk({ reasoning_content: piece }));
  if (reply.content !== null && reply.content !== '') for (const piece of halves(reply.content)) chunks.push(chunk({ content: piece }));
  reply.toolCalls.forEach((call, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of halves(functionArguments(call))) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, reply.finishReason));
  if (includeUsage) chunks.push({ ...base, choices: [], usage });
  return chunks;
}

/** The OpenAI-shaped error body for `spec`. */
export function errorBody(spec: ErrorSpec): object {
  const type = spec.type ?? DEFAULT_ERROR_TYPES[spec.status] ?? (spec.status >= 500 ? 'server_error' : 'invalid_request_error');
  return { error: { message: spec.message ?? `loopback error ${spec.status}`, type, param: null, code: spec.code ?? null } };
}
