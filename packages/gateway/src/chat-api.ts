import { randomUUID } from 'node:crypto';
import { partsText } from '@baton/protocol';
import { looksLikeSummaryRequest, sse, type AgentApi } from './agent-api.ts';
import { ChatReplyReader } from './chat-reply-reader.ts';
import { parseChatRequest, type ChatMessage } from './chat-request.ts';
import { jsonOf } from './json-body.ts';
import { splitHistory, systemPrompt } from './conversation.ts';

/** OpenAI chat completions: leading system messages stay outside the recorded conversation. */
export const chatApi: AgentApi = {
  api: 'openai-chat',
  member: 'messages',
  matches: (endpoint) => endpoint === '/v1/chat/completions' || endpoint === '/chat/completions',
  parse: (bytes) => chatApi.read(jsonOf(bytes)),
  read(json) {
    const chat = parseChatRequest(json);
    if (chat === null) return null;
    const { system, history } = splitHistory(chat.messages);
    return { api: 'openai-chat', model: chat.model, system, history, tools: chat.tools, stream: chat.stream, body: chat.body };
  },
  canonical: (item) => item,
  openFields(req) {
    const prompt = systemPrompt(req.system as ChatMessage[]);
    return prompt !== null && prompt.length > 0 ? { system: prompt } : {};
  },
  replyReader: (req) => new ChatReplyReader(req.stream),
  isCompaction(req) {
    if (req.tools !== null && req.tools.length > 0) return false;
    const last = [...req.history].reverse().find((m) => m['role'] === 'user');
    return looksLikeSummaryRequest(req.system.map((m) => partsText(m['content'])).join('\n'), partsText(last?.['content']));
  },
  textReply(req, text, usage) {
    const id = `chatcmpl-baton-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const totals = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
    if (!req.stream) {
      const body = { id, object: 'chat.completion', created, model: req.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: totals };
      return { contentType: 'application/json', body: JSON.stringify(body) };
    }
    const chunk = (delta: object, finish: string | null, extra: object = {}): object => ({ id, object: 'chat.completion.chunk', created, model: req.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra });
    const includeUsage = (req.body['stream_options'] as { include_usage?: unknown } | undefined)?.include_usage === true;
    const events = [
      sse(null, chunk({ role: 'assistant', content: text }, null)),
      sse(null, chunk({}, 'stop')),
      ...(includeUsage ? [sse(null, { id, object: 'chat.completion.chunk', created, model: req.model, choices: [], usage: totals })] : []),
      'data: [DONE]\n\n',
    ];
    return { contentType: 'text/event-stream', body: events.join('') };
  },
};
