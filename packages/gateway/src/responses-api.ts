import { randomUUID } from 'node:crypto';
import { partsText } from '@baton/protocol';
import { looksLikeSummaryRequest, paramsOf, sse, type AgentApi } from './agent-api.ts';
import type { AgentItem } from './agent-request.ts';
import { isObjectList, jsonOf, modelRequestBody } from './json-body.ts';
import { ResponsesReplyReader } from './responses-reply.ts';

/** Fields of a Responses request that are not carried into writer requests. */
const NOT_PARAMS = new Set(['model', 'input', 'tools', 'stream', 'stream_options', 'client_metadata', 'metadata', 'store', 'previous_response_id', 'background', 'conversation', 'user', 'safety_identifier']);

const isSystemItem = (item: AgentItem): boolean => (item['type'] === undefined || item['type'] === 'message') && (item['role'] === 'system' || item['role'] === 'developer');

/** Whether Codex marked the request as its compaction (its turn metadata header names the request kind). */
function codexCompaction(header: string | string[] | undefined): boolean {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined) return false;
  try {
    return (JSON.parse(text) as { request_kind?: unknown }).request_kind === 'compaction';
  } catch {
    return false;
  }
}

/**
 * The OpenAI Responses API: the conversation is `input` (a string is one user message); leading system and developer
 * items (Codex's and pi's system prompt) stay outside the recorded conversation and go first in every request.
 */
export const responsesApi: AgentApi = {
  api: 'openai-responses',
  member: 'input',
  matches: (endpoint) => endpoint === '/v1/responses' || endpoint === '/responses',
  parse: (bytes) => responsesApi.read(jsonOf(bytes)),
  read(json) {
    const b = modelRequestBody(json);
    if (b === null) return null;
    const input = typeof b['input'] === 'string' ? [{ role: 'user', content: b['input'] }] : b['input'];
    if (!isObjectList(input)) return null;
    const items: AgentItem[] = input;
    let n = 0;
    while (n < items.length && isSystemItem(items[n] as AgentItem)) n++;
    const tools = Array.isArray(b['tools']) ? (b['tools'] as object[]) : null;
    return { api: 'openai-responses', model: b.model, system: items.slice(0, n), history: items.slice(n), tools, stream: b['stream'] === true, body: b };
  },
  canonical: (item) => item,
  openFields(req) {
    const params = paramsOf(req.body, NOT_PARAMS);
    return { api: 'openai-responses', ...(req.system.length > 0 ? { system: req.system.map((i) => ({ ...i })) } : {}), ...(params !== undefined ? { params } : {}) };
  },
  replyReader: (req) => new ResponsesReplyReader(req.stream),
  isCompaction(req, headers) {
    if (codexCompaction(headers['x-codex-turn-metadata'])) return true;
    if (req.tools !== null && req.tools.length > 0) return false;
    const last = [...req.history].reverse().find((i) => i['role'] === 'user');
    const system = [typeof req.body['instructions'] === 'string' ? req.body['instructions'] : '', ...req.system.map((i) => partsText(i['content']))].join('\n');
    return looksLikeSummaryRequest(system, partsText(last?.['content']));
  },
  textReply(req, text, usage) {
    const item = { type: 'message', id: `msg_baton_${randomUUID().replaceAll('-', '')}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
    const response = {
      id: `resp_baton_${randomUUID().replaceAll('-', '')}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model: req.model,
      output: [item],
      usage: { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.input + usage.output },
    };
    if (!req.stream) return { contentType: 'application/json', body: JSON.stringify(response) };
    let seq = 0;
    const event = (type: string, data: object): string => sse(type, { type, sequence_number: seq++, ...data });
    const part = { type: 'output_text', text: '', annotations: [] };
    const events = [
      event('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } }),
      event('response.in_progress', { response: { ...response, status: 'in_progress', output: [], usage: null } }),
      event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
      event('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part }),
      event('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text }),
      event('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text }),
      event('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: { ...part, text } }),
      event('response.output_item.done', { output_index: 0, item }),
      event('response.completed', { response }),
    ];
    return { contentType: 'text/event-stream', body: events.join('') };
  },
};
