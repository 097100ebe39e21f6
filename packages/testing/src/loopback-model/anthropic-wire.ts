import { parseToolArguments } from './chat-request.ts';
import { halves } from './openai-wire.ts';
import { functionArguments, type ResolvedReply } from './resolve-reply.ts';
import type { SseEvent } from './responses-wire.ts';
import type { ErrorSpec } from './types.ts';

/** The usage block of a Messages reply: `input_tokens` is only the uncached part after the last cache breakpoint. */
export interface AnthropicUsage {
  readonly input_tokens: number;
  readonly cache_creation_input_tokens: number;
  readonly cache_read_input_tokens: number;
  readonly output_tokens: number;
}

/** Message metadata shared by the JSON and SSE encodings. */
export interface MessageMeta {
  readonly id: string;
  readonly model: string;
}

const STOP_REASONS: Readonly<Record<string, string>> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' };

/** Anthropic's `stop_reason` for a chat-style finish reason (`stop` → `end_turn`, …; others verbatim). */
export function stopReason(finishReason: string): string {
  return STOP_REASONS[finishReason] ?? finishReason;
}

type Block = Record<string, unknown> & { readonly type: string };

/** The content blocks of a reply: thinking first, then the text, then one `tool_use` per call. */
export function messageContent(reply: ResolvedReply): Block[] {
  const blocks: Block[] = [];
  if (reply.thinking !== undefined) blocks.push({ type: 'thinking', thinking: reply.thinking.text, signature: reply.thinking.signature });
  const empty = reply.thinking === undefined && reply.toolCalls.length === 0;
  if (reply.content !== null && (reply.content !== '' || empty)) blocks.push({ type: 'text', text: reply.content });
  for (const call of reply.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseToolArguments(functionArguments(call)) });
  return blocks;
}

/** The non-streaming `message` body. */
export function messageBody(meta: MessageMeta, reply: ResolvedReply, usage: AnthropicUsage): object {
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: messageContent(reply),
    stop_reason: stopReason(reply.finishReason),
    stop_sequence: null,
    usage,
  };
}

function blockEvents(block: Block, index: number, emit: (type: string, fields: object) => void): void {
  switch (block.type) {
    case 'thinking': {
      emit('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      const text = String(block['thinking']);
      if (text !== '') for (const thinking of halves(text)) emit('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
      emit('content_block_delta', { index, delta: { type: 'signature_delta', signature: block['signature'] } });
      break;
    }
    case 'text': {
      emit('content_block_start', { index, content_block: { type: 'text', text: '' } });
      const text = String(block['text']);
      if (text !== '') for (const piece of halves(text)) emit('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      break;
    }
    case 'tool_use': {
      emit('content_block_start', { index, content_block: { type: 'tool_use', id: block['id'], name: block['name'], input: {} } });
      for (const partial_json of halves(JSON.stringify(block['input']))) emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
      break;
    }
    default:
      break;
  }
  emit('content_block_stop', { index });
}

/**
 * The SSE events of a streamed reply: `message_start` (the message with empty content and the input usage), a
 * `ping`, per block `content_block_start`, its deltas (`thinking_delta` then `signature_delta`, `text_delta`,
 * `input_json_delta` — each text in two pieces) and `content_block_stop`, then `message_delta` (stop reason and the
 * whole usage) and `message_stop`.
 */
export function messageEvents(meta: MessageMeta, reply: ResolvedReply, usage: AnthropicUsage): SseEvent[] {
  const events: SseEvent[] = [];
  const emit = (type: string, fields: object): void => void events.push({ event: type, data: { type, ...fields } });
  const start = { ...(messageBody(meta, reply, usage) as Record<string, unknown>), content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } };
  emit('message_start', { message: start });
  emit('ping', {});
  messageContent(reply).forEach((block, index) => blockEvents(block, index, emit));
  emit('message_delta', { delta: { stop_reason: stopReason(reply.finishReason), stop_sequence: null }, usage });
  emit('message_stop', {});
  return events;
}

const DEFAULT_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The Anthropic-shaped error body for `spec`. */
export function anthropicErrorBody(spec: ErrorSpec): object {
  const type = spec.type ?? DEFAULT_ERROR_TYPES[spec.status] ?? (spec.status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message: spec.message ?? `loopback error ${spec.status}` } };
}
