import Anthropic, { APIConnectionError as AnthropicConnectionError } from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import OpenAI, { APIConnectionError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type ConversationView, type LoopbackModel, type RecordedRequest, type ScriptStep } from '../../src/index.ts';

let server: LoopbackModel;

afterEach(async () => {
  await server.close();
});

const SYSTEM = 'You are a coding agent.';
const ASK = 'Please read src/a.ts.';
const FILE = 'export const a = 1;';

/** One responder for every API: reads the neutral view, answers with a spec that renders in the request's API. */
function agentModel(req: RecordedRequest): ScriptStep {
  const last = req.conversation.items.at(-1);
  if (last?.toolResults.length === 0) {
    return { reply: { thinking: { text: 'Read it first.', signature: 'sig-1' }, content: 'Reading.', tool_calls: [{ id: 'call_read', name: 'read', arguments: { path: 'src/a.ts' } }] } };
  }
  return { reply: { content: `The file says: ${last?.toolResults[0]?.output ?? '?'}` } };
}

/** The conversation as a flat list of what was said, whatever the roles and grouping of the API. */
function said(view: ConversationView | undefined): unknown[] {
  return (view?.items ?? []).flatMap((item) => [
    ...item.toolResults.map((r) => ['result', r.callId, r.output]),
    ...(item.text === '' || item.role === 'system' ? [] : [[item.role, item.text]]),
    ...item.toolCalls.map((c) => ['call', c.id, c.name, JSON.parse(c.arguments) as unknown]),
  ]);
}

const tool = { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };

describe('one script, three APIs', () => {
  it('the same responder serves chat, Responses and Messages clients, each in its own shape', async () => {
    server = await startLoopbackModel({ mode: 'scripted' });
    server.setResponder(agentModel);
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });

    // Chat completions.
    const chat: ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: ASK },
    ];
    const chatTools = [{ type: 'function' as const, function: tool }];
    const c1 = (await openai.chat.completions.create({ model: 'm', messages: chat, tools: chatTools })).choices[0]?.message;
    const chatCall = c1?.tool_calls?.[0];
    expect(chatCall?.type === 'function' ? [chatCall.id, chatCall.function.name, chatCall.function.arguments] : []).toEqual(['call_read', 'read', '{"path":"src/a.ts"}']);
    expect(c1?.content).toBe('Reading.');
    chat.push({ role: 'assistant', content: c1?.content ?? null, tool_calls: c1?.tool_calls ?? [] }, { role: 'tool', tool_call_id: 'call_read', content: FILE });
    const c2 = await openai.chat.completions.create({ model: 'm', messages: chat, tools: chatTools });
    expect(c2.choices[0]?.message.content).toBe(`The file says: ${FILE}`);

    // Responses.
    const input: ResponseInputItem[] = [{ role: 'user', content: ASK }];
    const responsesTools = [{ type: 'function' as const, strict: false, ...tool }];
    const r1 = await openai.responses.create({ model: 'm', instructions: SYSTEM, input, tools: responsesTools, store: false });
    expect(r1.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(r1.output_text).toBe('Reading.');
    input.push(...(r1.output as ResponseInputItem[]), { type: 'function_call_output', call_id: 'call_read', output: FILE });
    const r2 = await openai.responses.create({ model: 'm', instructions: SYSTEM, input, tools: responsesTools, store: false });
    expect(r2.output_text).toBe(`The file says: ${FILE}`);

    // Anthropic Messages (streamed).
    const messages: MessageParam[] = [{ role: 'user', content: ASK }];
    const anthropicTools = [{ name: tool.name, description: tool.description, input_schema: { ...tool.parameters, type: 'object' as const } }];
    const a1 = await anthropic.messages.stream({ model: 'm', max_tokens: 1000, system: SYSTEM, messages, tools: anthropicTools }).finalMessage();
    expect(a1.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(a1.stop_reason).toBe('tool_use');
    messages.push({ role: 'assistant', content: a1.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_read', content: FILE }] });
    const a2 = await anthropic.messages.create({ model: 'm', max_tokens: 1000, system: SYSTEM, messages, tools: anthropicTools });
    expect(a2.content).toEqual([{ type: 'text', text: `The file says: ${FILE}` }]);

    expect(server.requests.map((r) => r.api)).toEqual(['openai-chat', 'openai-chat', 'openai-responses', 'openai-responses', 'anthropic-messages', 'anthropic-messages']);
    expect(server.requests.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    // The second request of each API reads the same through the neutral view (and the chat form).
    const [chatView, responsesView, anthropicView] = [1, 3, 5].map((i) => server.requests[i]?.conversation);
    const expected = [['user', ASK], ['assistant', 'Reading.'], ['call', 'call_read', 'read', { path: 'src/a.ts' }], ['result', 'call_read', FILE]];
    for (const view of [chatView, responsesView, anthropicView]) {
      expect(said(view)).toEqual(expected);
      expect(view?.system).toBe(SYSTEM);
      expect(view?.tools).toEqual([tool]);
    }
    // Reasoning sent back in each API's own way: a Responses reasoning item, an Anthropic thinking block.
    expect(responsesView?.items.find((i) => i.thinking !== undefined)?.thinking).toEqual({ text: 'Read it first.', signature: 'sig-1' });
    expect(anthropicView?.items.find((i) => i.thinking !== undefined)?.thinking).toEqual({ text: 'Read it first.', signature: 'sig-1' });
    const chatForms = [1, 3, 5].map((i) => server.requests[i]?.body.messages.map((m) => [m.role, m.content, m.tool_calls?.[0]?.id, m.tool_call_id]));
    expect(chatForms[1]).toEqual(chatForms[2]);
    expect(chatForms[1]).toEqual([
      ['system', SYSTEM, undefined, undefined],
      ['user', ASK, undefined, undefined],
      ['assistant', 'Reading.', 'call_read', undefined],
      ['tool', FILE, undefined, 'call_read'],
    ]);
  });

  it('drops and delays apply to every API', async () => {
    server = await startLoopbackModel({ mode: 'scripted' });
    server.script({ drop: true }, { drop: true }, { delayMs: 20, then: { reply: { content: 'late' } } });
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    await expect(openai.responses.create({ model: 'm', input: 'x' })).rejects.toBeInstanceOf(APIConnectionError);
    await expect(anthropic.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(AnthropicConnectionError);
    const late = await anthropic.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(late.content).toEqual([{ type: 'text', text: 'late' }]);
  });
});
