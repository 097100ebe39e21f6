import { randomUUID } from 'node:crypto';
import { partsText } from '@baton/protocol';
import { looksLikeSummaryRequest, paramsOf, sse, type AgentApi } from './agent-api.ts';
import { AnthropicReplyReader } from './anthropic-reply.ts';
import { isObjectList, jsonOf, modelRequestBody } from './json-body.ts';

/** Fields of a Messages request that are not carried into writer requests. */
const NOT_PARAMS = new Set(['model', 'messages', 'system', 'tools', 'stream', 'metadata']);

const hasBreakpoint = (v: unknown): boolean => typeof v === 'object' && v !== null && 'cache_control' in v;

/** A content block without its `cache_control` marker (a `tool_result`'s own content blocks too). */
function withoutBreakpoint(block: unknown): unknown {
  if (typeof block !== 'object' || block === null) return block;
  const { cache_control: _marker, ...rest } = block as Record<string, unknown>;
  if (Array.isArray(rest['content']) && rest['content'].some(hasBreakpoint)) rest['content'] = rest['content'].map(withoutBreakpoint);
  return rest;
}

const carriesBreakpoint = (block: unknown): boolean => hasBreakpoint(block) || (Array.isArray((block as { content?: unknown } | null)?.content) && ((block as { content: unknown[] }).content.some(hasBreakpoint)));

/**
 * The Anthropic Messages API: the conversation is `messages`, the system prompt its own field. Agents move their
 * `cache_control` breakpoint forward every turn, so messages are recorded and compared without it.
 */
export const anthropicApi: AgentApi = {
  api: 'anthropic-messages',
  member: 'messages',
  matches: (endpoint) => endpoint === '/v1/messages' || endpoint === '/messages',
  parse: (bytes) => anthropicApi.read(jsonOf(bytes)),
  read(json) {
    const b = modelRequestBody(json);
    const messages = b?.['messages'];
    if (b === null || !isObjectList(messages) || !messages.every((m) => typeof m['role'] === 'string')) return null;
    const tools = Array.isArray(b['tools']) ? (b['tools'] as object[]) : null;
    return { api: 'anthropic-messages', model: b.model, system: [], history: messages, tools, stream: b['stream'] === true, body: b };
  },
  canonical(item) {
    const content = item['content'];
    if (!Array.isArray(content) || !content.some(carriesBreakpoint)) return item;
    return { ...item, content: content.map(withoutBreakpoint) };
  },
  openFields(req, headers) {
    const system = req.body['system'];
    const params = paramsOf(req.body, NOT_PARAMS);
    const beta = headers['anthropic-beta'];
    const betaText = Array.isArray(beta) ? beta.join(',') : beta;
    return {
      api: 'anthropic-messages',
      ...(typeof system === 'string' ? { system } : Array.isArray(system) ? { system: system as Record<string, unknown>[] } : {}),
      ...(params !== undefined ? { params } : {}),
      ...(betaText !== undefined && betaText !== '' ? { headers: { 'anthropic-beta': betaText } } : {}),
    };
  },
  replyReader: (req) => new AnthropicReplyReader(req.stream),
  isCompaction(req) {
    if (req.tools !== null && req.tools.length > 0) return false;
    const system = req.body['system'];
    const systemText = typeof system === 'string' ? system : partsText(system);
    const last = [...req.history].reverse().find((m) => m['role'] === 'user');
    return looksLikeSummaryRequest(systemText, partsText(last?.['content']));
  },
  textReply(req, text, usage) {
    const message = {
      id: `msg_baton_${randomUUID().replaceAll('-', '')}`,
      type: 'message',
      role: 'assistant',
      model: req.model,
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: usage.output },
    };
    if (!req.stream) return { contentType: 'application/json', body: JSON.stringify(message) };
    const events = [
      sse('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } }),
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output } }),
      sse('message_stop', { type: 'message_stop' }),
    ];
    return { contentType: 'text/event-stream', body: events.join('') };
  },
};
