import OpenAI, { BadRequestError, InternalServerError, RateLimitError } from 'openai';
import type { FunctionTool, ResponseInput, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';

const servers: LoopbackModel[] = [];

async function start(options: Parameters<typeof startLoopbackModel>[0] = { mode: 'scripted' }): Promise<LoopbackModel> {
  const server = await startLoopbackModel(options);
  servers.push(server);
  return server;
}

function client(server: LoopbackModel, maxRetries = 0): OpenAI {
  return new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const readTool: FunctionTool = {
  type: 'function',
  name: 'read',
  description: 'Read a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  strict: false,
};

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('loopback model: OpenAI Responses API', () => {
  it('answers text parsed by the SDK, with usage, and records the request', async () => {
    const server = await start();
    server.script({ reply: { content: 'hello there' } });
    const res = await client(server).responses.create({ model: 'gpt-5-codex', instructions: 'Be brief.', input: 'Say hello.', store: false });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.model).toBe('gpt-5-codex');
    expect(res.output_text).toBe('hello there');
    expect(res.output).toEqual([
      { type: 'message', id: 'msg_loopback_0', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'hello there', annotations: [], logprobs: [] }] },
    ]);
    expect(res.usage?.input_tokens).toBeGreaterThan(0);
    expect(res.usage?.output_tokens).toBeGreaterThan(0);
    expect(res.usage?.total_tokens).toBe((res.usage?.input_tokens ?? 0) + (res.usage?.output_tokens ?? 0));
    expect(res.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(res).toMatchObject({ store: false, instructions: 'Be brief.' });

    const recorded = server.requests[0];
    expect(recorded?.api).toBe('openai-responses');
    expect(recorded?.path).toBe('/v1/responses');
    expect(JSON.parse(recorded?.rawBody ?? '')).toEqual(recorded?.wire);
    expect(recorded?.conversation).toMatchObject({ model: 'gpt-5-codex', instructions: 'Be brief.', system: 'Be brief.', stream: false });
    expect(recorded?.conversation.items).toEqual([{ role: 'user', text: 'Say hello.', toolCalls: [], toolResults: [], thinking: undefined }]);
    expect(recorded?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello.' },
    ]);
    expect(server.stats().calls).toBe(1);
  });

  it('answers tool calls and a reasoning item; reads every input item kind back through the neutral view', async () => {
    const server = await start();
    server.script({
      reply: {
        thinking: { text: 'I should read both files.', signature: 'enc-sig-1' },
        tool_calls: [{ name: 'read', arguments: { path: '/a.md' } }, { name: 'read', arguments: '{"path":"/b.md"}', id: 'mine' }],
      },
    });
    const input: ResponseInput = [
      { role: 'developer', content: 'Use the tools.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read the docs.' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'thinking before' }], encrypted_content: 'enc-0' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading.', annotations: [] }], id: 'msg_1', status: 'completed' },
      { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{"path":"/x"}', id: 'fc_1' },
      { type: 'function_call_output', call_id: 'c1', output: 'file x' },
      { type: 'local_shell_call', id: 'ls_1', call_id: 'c2', status: 'completed', action: { type: 'exec', command: ['ls'], env: {} } },
      { type: 'local_shell_call_output', id: 'c2', output: 'a.md b.md' },
    ];
    const tools = [readTool, { type: 'web_search' as const }, { type: 'local_shell' as const }, { type: 'custom' as const, name: 'apply_patch' }];
    const res = await client(server).responses.create({
      model: 'm',
      input,
      tools,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'session-1',
      parallel_tool_calls: true,
      reasoning: { effort: 'medium', summary: 'auto' },
      tool_choice: 'auto',
      max_output_tokens: 1000,
      store: false,
    });
    expect(res.output.map((o) => o.type)).toEqual(['reasoning', 'function_call', 'function_call']);
    expect(res.output[0]).toEqual({ type: 'reasoning', id: 'rs_loopback_0', summary: [{ type: 'summary_text', text: 'I should read both files.' }], encrypted_content: 'enc-sig-1' });
    const calls = res.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
    expect(calls.map((c) => [c.call_id, c.name, JSON.parse(c.arguments) as unknown, c.status])).toEqual([
      ['call_0_0', 'read', { path: '/a.md' }, 'completed'],
      ['mine', 'read', { path: '/b.md' }, 'completed'],
    ]);
    expect(res.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(res.output_text).toBe('');

    const view = server.requests[0]?.conversation;
    expect(view?.system).toBe('Use the tools.');
    expect(view?.tools.map((t) => t.name)).toEqual(['read']);
    expect(view?.items.map((i) => [i.role, i.text, i.toolCalls, i.toolResults.map((r) => [r.callId, r.output]), i.thinking])).toEqual([
      ['developer', 'Use the tools.', [], [], undefined],
      ['user', 'Read the docs.', [], [], undefined],
      ['assistant', '', [], [], { text: 'thinking before', signature: 'enc-0' }],
      ['assistant', 'Reading.', [], [], undefined],
      ['assistant', '', [{ id: 'c1', name: 'read', arguments: '{"path":"/x"}' }], [], undefined],
      ['tool', '', [], [['c1', 'file x']], undefined],
      ['assistant', '', [{ id: 'c2', name: 'local_shell', arguments: JSON.stringify({ type: 'exec', command: ['ls'], env: {} }) }], [], undefined],
      ['tool', '', [], [['c2', 'a.md b.md']], undefined],
    ]);
    // The chat form: the assistant text and the call after it in one message, tool results as tool messages.
    expect(server.requests[0]?.body.messages.map((m) => [m.role, m.content, m.tool_calls?.map((c) => c.id) ?? [], m.tool_call_id])).toEqual([
      ['developer', 'Use the tools.', [], undefined],
      ['user', 'Read the docs.', [], undefined],
      ['assistant', 'Reading.', ['c1'], undefined],
      ['tool', 'file x', [], 'c1'],
      ['assistant', null, ['c2'], undefined],
      ['tool', 'a.md b.md', [], 'c2'],
    ]);
  });

  it('streams events the SDK accumulates: text, then a function call, with usage in response.completed', async () => {
    const server = await start();
    server.script({ reply: { content: 'streamed text', tool_calls: [{ name: 'read', arguments: { path: '/x' } }] } });
    const stream = client(server).responses.stream({ model: 'm', input: 'Go.', tools: [readTool] });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('streamed text');
    expect(deltas.length).toBeGreaterThan(1);
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('streamed text');
    const call = final.output.find((o) => o.type === 'function_call');
    expect(call?.type === 'function_call' ? [call.name, JSON.parse(call.arguments) as unknown] : undefined).toEqual(['read', { path: '/x' }]);
    expect(final.usage?.input_tokens).toBeGreaterThan(0);
    expect(server.requests[0]?.conversation.stream).toBe(true);
  });

  it('streams with stream: true as `event:` + `data:` SSE, sequence-numbered, in the documented order', async () => {
    const server = await start();
    server.script({ reply: { content: 'hi', thinking: { text: 'plan', signature: 'sig' }, tool_calls: [{ name: 'read', arguments: { path: '/y' } }] } });
    const raw = await fetch(`${server.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: 'Go.', stream: true }),
    });
    expect(raw.headers.get('content-type')).toBe('text/event-stream');
    const text = await raw.text();
    const names = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    const data = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1] ?? '') as { type: string; sequence_number: number });
    expect(data.map((d) => d.type)).toEqual(names);
    expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
    expect([...new Set(names)]).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.completed',
    ]);

    server.script({ reply: { content: 'ok' } });
    const events: ResponseStreamEvent['type'][] = [];
    const stream = await client(server).responses.create({ model: 'm', input: 'Again.', stream: true });
    for await (const event of stream) events.push(event.type);
    expect(events.at(0)).toBe('response.created');
    expect(events.at(-1)).toBe('response.completed');
  });

  it('marks a length finish incomplete', async () => {
    const server = await start();
    server.script({ reply: { content: 'cut', finish_reason: 'length' } }, { reply: { content: 'cut', finish_reason: 'length' } });
    const res = await client(server).responses.create({ model: 'm', input: 'Long.' });
    expect(res.status).toBe('incomplete');
    expect(res.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    const streamed = await client(server).responses.stream({ model: 'm', input: 'Long.' }).finalResponse();
    expect(streamed.status).toBe('incomplete');
  });

  it('credits the shared prefix of a growing conversation as cached input', async () => {
    const server = await start();
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const c = client(server);
    const instructions = Array.from({ length: 400 }, (_, i) => `Rule ${i}: keep edits small and reviewed.`).join('\n');
    const input: ResponseInput = [{ role: 'user', content: 'First question about the parser.' }];
    const r1 = await c.responses.create({ model: 'm', instructions, input, tools: [readTool] });
    const first = r1.usage?.input_tokens ?? 0;
    expect(first).toBeGreaterThan(2048);
    expect(r1.usage?.input_tokens_details.cached_tokens).toBe(0);

    input.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'And now?' });
    const r2 = await c.responses.create({ model: 'm', instructions, input, tools: [readTool] });
    const cached = r2.usage?.input_tokens_details.cached_tokens ?? 0;
    expect(r2.usage?.input_tokens).toBeGreaterThan(first);
    expect(cached).toBeGreaterThanOrEqual(0.9 * first);
    expect(cached).toBeLessThanOrEqual(first);
    expect(cached % 128).toBe(0);

    const changed = await c.responses.create({ model: 'm', instructions: `${instructions} (changed)`, input, tools: [readTool] });
    expect(changed.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(server.stats()).toMatchObject({ calls: 3, cachedTokens: cached });
  });

  it('answers scripted errors and bad input in the OpenAI error shape', async () => {
    const server = await start();
    server.script({ error: { status: 429, message: 'slow down' } }, { error: { status: 400, message: 'too long', code: 'context_length_exceeded' } });
    expect(await caught(client(server).responses.create({ model: 'm', input: 'x' }))).toBeInstanceOf(RateLimitError);
    const tooLong = await caught(client(server).responses.create({ model: 'm', input: 'x' }));
    expect(tooLong).toBeInstanceOf(BadRequestError);
    expect((tooLong as BadRequestError).code).toBe('context_length_exceeded');
    const exhausted = await caught(client(server).responses.create({ model: 'm', input: 'x' }));
    expect(exhausted).toBeInstanceOf(InternalServerError);

    const post = (body: string): Promise<Response> =>
      fetch(`${server.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const malformed = await post(JSON.stringify({ model: 'm', input: [{ type: 'function_call', name: 'read' }] }));
    expect(malformed.status).toBe(400);
    const body = (await malformed.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('invalid responses request');
    expect((await post('{"model":')).status).toBe(400);
    expect(server.requests).toHaveLength(3);
  });
});
