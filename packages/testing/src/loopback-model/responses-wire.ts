import { halves } from './openai-wire.ts';
import type { ResolvedReply } from './resolve-reply.ts';
import type { ResponsesRequest } from './responses-request.ts';

/** The usage block of a Responses reply (`input_tokens` includes the cached ones). */
export interface ResponsesUsage {
  readonly input_tokens: number;
  readonly input_tokens_details: { readonly cached_tokens: number };
  readonly output_tokens: number;
  readonly output_tokens_details: { readonly reasoning_tokens: number };
  readonly total_tokens: number;
}

/** Response metadata shared by the JSON and SSE encodings. */
export interface ResponseMeta {
  readonly index: number;
  /** Seconds. */
  readonly createdAt: number;
  readonly request: ResponsesRequest;
}

/** One Server-Sent Event: its `event:` name and `data:` JSON. */
export interface SseEvent {
  readonly event: string;
  readonly data: object;
}

type Item = Record<string, unknown> & { readonly type: string; readonly id: string };

/**
 * The output items of a reply, in order: reasoning (from `thinking`), the message, then one per call — a
 * `function_call`, or a `custom_tool_call` (its `input` the free-form text) for a custom call.
 */
export function responseOutput(meta: ResponseMeta, reply: ResolvedReply): Item[] {
  const items: Item[] = [];
  if (reply.thinking !== undefined) {
    const summary = reply.thinking.text === '' ? [] : [{ type: 'summary_text', text: reply.thinking.text }];
    items.push({ type: 'reasoning', id: `rs_loopback_${meta.index}`, summary, encrypted_content: reply.thinking.signature });
  }
  if (reply.content !== null && (reply.content !== '' || reply.toolCalls.length === 0)) {
    items.push({
      type: 'message',
      id: `msg_loopback_${meta.index}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: reply.content, annotations: [], logprobs: [] }],
    });
  }
  reply.toolCalls.forEach((call, n) => {
    if (call.kind === 'custom') items.push({ type: 'custom_tool_call', id: `ctc_loopback_${meta.index}_${n}`, call_id: call.id, name: call.name, input: call.arguments, status: 'completed' });
    else items.push({ type: 'function_call', id: `fc_loopback_${meta.index}_${n}`, call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed' });
  });
  return items;
}

function incompleteReason(finishReason: string): string | undefined {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return undefined;
}

function field(request: ResponsesRequest, key: string, fallback: unknown): unknown {
  const value = (request as Record<string, unknown>)[key];
  return value === undefined ? fallback : value;
}

/**
 * The `response` object: `completed` (or `incomplete` for a `length`/`content_filter` finish), the request's settings
 * echoed like the real API does, `output` and `usage` (`null` while in progress).
 */
export function responseObject(meta: ResponseMeta, reply: ResolvedReply, output: readonly Item[], usage: ResponsesUsage | null): object {
  const reason = incompleteReason(reply.finishReason);
  const status = usage === null ? 'in_progress' : reason === undefined ? 'completed' : 'incomplete';
  const { request } = meta;
  return {
    id: `resp_loopback_${meta.index}`,
    object: 'response',
    created_at: meta.createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: field(request, 'max_output_tokens', null),
    model: request.model,
    output,
    parallel_tool_calls: field(request, 'parallel_tool_calls', true),
    previous_response_id: field(request, 'previous_response_id', null),
    prompt_cache_key: field(request, 'prompt_cache_key', null),
    reasoning: field(request, 'reasoning', { effort: null, summary: null }),
    service_tier: 'default',
    store: field(request, 'store', true),
    temperature: field(request, 'temperature', 1),
    text: field(request, 'text', { format: { type: 'text' } }),
    tool_choice: field(request, 'tool_choice', 'auto'),
    tools: request.tools ?? [],
    top_p: field(request, 'top_p', 1),
    truncation: field(request, 'truncation', 'disabled'),
    usage,
    user: null,
    metadata: field(request, 'metadata', {}),
  };
}

function itemEvents(item: Item, outputIndex: number, emit: (type: string, fields: object) => void): void {
  const at = { item_id: item.id, output_index: outputIndex };
  switch (item.type) {
    case 'reasoning': {
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, summary: [] } });
      for (const part of item['summary'] as { type: string; text: string }[]) {
        const summary = { ...at, summary_index: 0 };
        emit('response.reasoning_summary_part.added', { ...summary, part: { type: 'summary_text', text: '' } });
        for (const delta of halves(part.text)) emit('response.reasoning_summary_text.delta', { ...summary, delta });
        emit('response.reasoning_summary_text.done', { ...summary, text: part.text });
        emit('response.reasoning_summary_part.done', { ...summary, part });
      }
      break;
    }
    case 'message': {
      const [part] = item['content'] as { type: string; text: string }[];
      const text = part?.text ?? '';
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
      const content = { ...at, content_index: 0 };
      emit('response.content_part.added', { ...content, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      if (text !== '') for (const delta of halves(text)) emit('response.output_text.delta', { ...content, delta, logprobs: [] });
      emit('response.output_text.done', { ...content, text, logprobs: [] });
      emit('response.content_part.done', { ...content, part });
      break;
    }
    case 'function_call': {
      const args = String(item['arguments']);
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, arguments: '', status: 'in_progress' } });
      if (args !== '') for (const delta of halves(args)) emit('response.function_call_arguments.delta', { ...at, delta });
      emit('response.function_call_arguments.done', { ...at, name: item['name'], arguments: args });
      break;
    }
    case 'custom_tool_call': {
      const input = String(item['input']);
      emit('response.output_item.added', { output_index: outputIndex, item: { ...item, input: '', status: 'in_progress' } });
      if (input !== '') for (const delta of halves(input)) emit('response.custom_tool_call_input.delta', { ...at, delta });
      emit('response.custom_tool_call_input.done', { ...at, input });
      break;
    }
    default:
      break;
  }
  emit('response.output_item.done', { output_index: outputIndex, item });
}

/**
 * The SSE events of a streamed reply, each `data` carrying its `type` and a `sequence_number`: `response.created`,
 * `response.in_progress`, per output item `output_item.added` … `output_item.done` (reasoning summary parts and
 * text, the message's content part and text deltas, a function call's argument deltas or a custom call's input
 * deltas — each text in two pieces), then
 * `response.completed` (or `response.incomplete`) with the whole response and its usage.
 */
export function responseEvents(meta: ResponseMeta, reply: ResolvedReply, usage: ResponsesUsage): SseEvent[] {
  const events: SseEvent[] = [];
  const emit = (type: string, fields: object): void => void events.push({ event: type, data: { type, sequence_number: events.length, ...fields } });
  const output = responseOutput(meta, reply);
  const pending = responseObject(meta, reply, [], null);
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  output.forEach((item, i) => itemEvents(item, i, emit));
  const final = responseObject(meta, reply, output, usage) as { status: string };
  emit(final.status === 'completed' ? 'response.completed' : 'response.incomplete', { response: final });
  return events;
}
