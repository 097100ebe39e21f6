import Anthropic, { BadRequestError, InternalServerError, OverloadedError, RateLimitError } from '@anthropic-ai/sdk';
import type { MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CACHE_BREAKPOINTS, startLoopbackModel, type LoopbackModel } from '../../src/index.ts';

const servers: LoopbackModel[] = [];

async function start(options: Parameters<typeof startLoopbackModel>[0] = { mode: 'scripted' }): Promise<LoopbackModel> {
  const server = await startLoopbackModel(options);
  servers.push(server);
  return server;
}

function client(server: LoopbackModel): Anthropic {
  return new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const readTool: Tool = { name: 'Read', description: 'Read a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
const ephemeral = { type: 'ephemeral' as const };

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

/** A system prompt of about 3 000 tokens, in two blocks with a breakpoint on the second (as Claude Code sends it). */
function longSystem(variant = ''): TextBlockParam[] {
  const rules = Array.from({ length: 300 }, (_, i) => `Rule ${i}: keep the change small and run the tests${variant}.`).join('\n');
  return [
    { type: 'text', text: 'You are a coding agent.' },
    { type: 'text', text: rules, cache_control: ephemeral },
  ];
}

describe('loopback model: Anthropic Messages API', () => {
  it('answers text parsed by the SDK, with usage, and records the request', async () => {
    const server = await start();
    server.script({ reply: { content: 'hello there' } });
    const res = await client(server).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello.' }],
      metadata: { user_id: 'u1' },
    });
    expect(res).toMatchObject({ id: 'msg_loopback_0', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'end_turn', stop_sequence: null });
    expect(res.content).toEqual([{ type: 'text', text: 'hello there' }]);
    expect(res.usage.input_tokens).toBeGreaterThan(0);
    expect(res.usage.output_tokens).toBeGreaterThan(0);
    expect(res.usage.cache_read_input_tokens).toBe(0);
    expect(res.usage.cache_creation_input_tokens).toBe(0);

    const recorded = server.requests[0];
    expect(recorded?.api).toBe('anthropic-messages');
    // Credentials are recorded, not checked (this SDK sends the key as a bearer token, others as x-api-key).
    expect(String(recorded?.headers['x-api-key'] ?? recorded?.headers.authorization)).toContain('test-key');
    expect(recorded?.headers['anthropic-version']).toBeDefined();
    expect(JSON.parse(recorded?.rawBody ?? '')).toEqual(recorded?.wire);
    expect(recorded?.conversation).toMatchObject({ model: 'claude-sonnet-4-5', instructions: 'Be brief.', system: 'Be brief.' });
    expect(recorded?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Say hello.' },
    ]);
  });

  it('accepts system-role messages in the list (as the SDK models them)', async () => {
    const server = await start();
    server.script({ reply: { content: 'ok' } });
    await client(server).messages.create({
      model: 'm',
      max_tokens: 10,
      system: 'Top.',
      messages: [{ role: 'user', content: 'Hi.' }, { role: 'system', content: [{ type: 'text', text: 'Mid-conversation rule.' }] }],
    });
    const view = server.requests[0]?.conversation;
    expect(view?.system).toBe('Top.\n\nMid-conversation rule.');
    expect(view?.items.map((i) => [i.role, i.text])).toEqual([
      ['user', 'Hi.'],
      ['system', 'Mid-conversation rule.'],
    ]);
  });

  it('answers thinking and tool_use blocks; reads every block kind back through the neutral view', async () => {
    const server = await start();
    server.script({
      reply: {
        content: 'Reading both.',
        thinking: { text: 'Both files matter.', signature: 'sig-abc' },
        tool_calls: [{ name: 'Read', arguments: { file_path: '/a.md' } }, { name: 'Read', arguments: '{"file_path":"/b.md"}', id: 'toolu_mine' }],
      },
    });
    const messages: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'Fix the parser.' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Look first.', signature: 'sig-0' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'src/p.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'export const p = 1;' }] },
          { type: 'text', text: '<system-reminder>be careful</system-reminder>', cache_control: ephemeral },
        ],
      },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'opaque' }, { type: 'text', text: 'Done?' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'boom', is_error: true }] },
    ];
    const res = await client(server).messages.create({
      model: 'm',
      max_tokens: 4096,
      system: [{ type: 'text', text: 'System one.', cache_control: ephemeral }],
      messages,
      tools: [readTool, { type: 'web_search_20250305', name: 'web_search', max_uses: 1 }],
      tool_choice: { type: 'auto' },
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(res.stop_reason).toBe('tool_use');
    expect(res.content).toEqual([
      { type: 'thinking', thinking: 'Both files matter.', signature: 'sig-abc' },
      { type: 'text', text: 'Reading both.' },
      { type: 'tool_use', id: 'toolu_0_0', name: 'Read', input: { file_path: '/a.md' } },
      { type: 'tool_use', id: 'toolu_mine', name: 'Read', input: { file_path: '/b.md' } },
    ]);

    const view = server.requests[0]?.conversation;
    expect(view?.system).toBe('System one.');
    expect(view?.tools.map((t) => t.name)).toEqual(['Read']);
    expect(view?.items.map((i) => [i.role, i.text, i.toolCalls, i.toolResults, i.thinking])).toEqual([
      ['user', 'Fix the parser.', [], [], undefined],
      ['assistant', 'Let me look.', [{ id: 'toolu_1', name: 'Read', arguments: '{"file_path":"src/p.ts"}' }], [], { text: 'Look first.', signature: 'sig-0' }],
      ['user', '<system-reminder>be careful</system-reminder>', [], [{ callId: 'toolu_1', output: 'export const p = 1;', isError: false }], undefined],
      ['assistant', 'Done?', [], [], { text: '', signature: 'opaque' }],
      ['user', '', [], [{ callId: 'toolu_x', output: 'boom', isError: true }], undefined],
    ]);
    expect(server.requests[0]?.body.messages.map((m) => [m.role, m.content, m.tool_call_id])).toEqual([
      ['system', 'System one.', undefined],
      ['user', 'Fix the parser.', undefined],
      ['assistant', 'Let me look.', undefined],
      ['tool', 'export const p = 1;', 'toolu_1'],
      ['user', '<system-reminder>be careful</system-reminder>', undefined],
      ['assistant', 'Done?', undefined],
      ['tool', 'boom', 'toolu_x'],
    ]);
  });

  it('streams events the SDK accumulates, with a ping, thinking and signature deltas, and tool input JSON', async () => {
    const server = await start();
    server.script({
      reply: { content: 'streamed text', thinking: { text: 'plan it', signature: 'sig-s' }, tool_calls: [{ name: 'Read', arguments: { file_path: '/x' } }] },
    });
    const stream = client(server).messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'Go.' }], tools: [readTool] });
    const texts: string[] = [];
    const types: string[] = [];
    stream.on('text', (delta) => texts.push(delta));
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    expect(texts.join('')).toBe('streamed text');
    expect(texts.length).toBeGreaterThan(1);
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'plan it', signature: 'sig-s' },
      { type: 'text', text: 'streamed text' },
      { type: 'tool_use', id: 'toolu_0_0', name: 'Read', input: { file_path: '/x' } },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.usage.output_tokens).toBeGreaterThan(1);
    expect(final.usage.input_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types.at(-2)).toBe('message_delta');

    server.script({ reply: { content: 'x', finish_reason: 'length' } });
    const raw = await fetch(`${server.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer oauth-token', 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      body: JSON.stringify({ model: 'm', max_tokens: 10, stream: true, temperature: 0, messages: [{ role: 'user', content: 'Go.' }] }),
    });
    const body = await raw.text();
    const names = [...body.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(body).toContain('"stop_reason":"max_tokens"');
    expect(server.requests[1]?.path).toBe('/v1/messages');
    expect(server.requests[1]?.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
  });

  it('caches at breakpoints: the second request of a growing conversation reads what the first wrote', async () => {
    const server = await start();
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const c = client(server);
    const messages: MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: 'First question about the parser.', cache_control: ephemeral }] }];
    const r1 = await c.messages.create({ model: 'm', max_tokens: 100, system: longSystem(), tools: [readTool], messages });
    expect(r1.usage.cache_read_input_tokens).toBe(0);
    const firstPrompt = r1.usage.cache_creation_input_tokens ?? 0;
    expect(firstPrompt).toBeGreaterThan(2048);
    // The breakpoint is on the last block: everything was written, nothing is left uncached.
    expect(r1.usage.input_tokens).toBe(0);

    // The agent echoes the reply, adds a turn and moves its breakpoint to the new last block.
    messages[0] = { role: 'user', content: [{ type: 'text', text: 'First question about the parser.' }] };
    messages.push({ role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, { role: 'user', content: [{ type: 'text', text: 'And now?', cache_control: ephemeral }] });
    const r2 = await c.messages.create({ model: 'm', max_tokens: 100, system: longSystem(), tools: [readTool], messages });
    expect(r2.usage.cache_read_input_tokens).toBe(firstPrompt);
    expect(r2.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(r2.usage.cache_creation_input_tokens).toBeLessThan(50);
    expect(r2.usage.input_tokens).toBe(0);

    // Without a breakpoint on the messages, the system breakpoint (written by the first call) is still read, and the
    // rest is plain input.
    const r3 = await c.messages.create({
      model: 'm',
      max_tokens: 100,
      system: longSystem(),
      tools: [readTool],
      messages: [{ role: 'user', content: 'Something else entirely.' }],
    });
    expect(r3.usage.cache_read_input_tokens).toBeGreaterThan(2048);
    expect(r3.usage.cache_read_input_tokens).toBeLessThan(firstPrompt);
    expect(r3.usage.cache_creation_input_tokens).toBe(0);
    expect(r3.usage.input_tokens).toBeGreaterThan(0);

    // Another model shares nothing; a request with no breakpoint at all neither reads nor writes.
    const other = await c.messages.create({ model: 'other', max_tokens: 100, system: longSystem(), tools: [readTool], messages });
    expect(other.usage.cache_read_input_tokens).toBe(0);
    const plain = await c.messages.create({ model: 'm', max_tokens: 100, system: longSystem().map((b) => ({ type: 'text' as const, text: b.text })), messages: [{ role: 'user', content: 'x' }] });
    expect([plain.usage.cache_read_input_tokens, plain.usage.cache_creation_input_tokens]).toEqual([0, 0]);
    const total = (u: Anthropic.Usage): number => u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
    expect(server.stats()).toMatchObject({ calls: 5, cachedTokens: firstPrompt + (r3.usage.cache_read_input_tokens ?? 0) });
    expect(server.stats().promptTokens).toBe([r1, r2, r3, other, plain].reduce((sum, r) => sum + total(r.usage), 0));
  });

  it('does not cache a prefix under the minimum', async () => {
    const server = await start();
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const messages: MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: 'Short prompt.', cache_control: ephemeral }] }];
    await client(server).messages.create({ model: 'm', max_tokens: 10, messages });
    const again = await client(server).messages.create({ model: 'm', max_tokens: 10, messages });
    expect([again.usage.cache_read_input_tokens, again.usage.cache_creation_input_tokens]).toEqual([0, 0]);
    expect(again.usage.input_tokens).toBeGreaterThan(0);
  });

  it(`refuses more than ${MAX_CACHE_BREAKPOINTS} breakpoints with a 400, like Anthropic`, async () => {
    const server = await start();
    const blocks: TextBlockParam[] = Array.from({ length: 5 }, (_, i) => ({ type: 'text', text: `part ${i}`, cache_control: ephemeral }));
    const err = await caught(client(server).messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: blocks }] }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).type).toBe('invalid_request_error');
    expect((err as BadRequestError).apiMessage).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    expect(server.requests).toHaveLength(0);
    server.script({ reply: { content: 'four is fine' } });
    const ok = await client(server).messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: blocks.slice(0, 4) }] });
    expect(ok.content).toEqual([{ type: 'text', text: 'four is fine' }]);
    // A marker inside a tool result's content counts too.
    const nested = await caught(
      client(server).messages.create({
        model: 'm',
        max_tokens: 10,
        system: [{ type: 'text', text: 'sys', cache_control: ephemeral }],
        messages: [
          { role: 'user', content: blocks.slice(0, 2) },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {}, cache_control: ephemeral }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'out', cache_control: ephemeral }] }] },
        ],
      }),
    );
    expect((nested as BadRequestError).apiMessage).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('counts tokens like a Messages call counts its input, and records nothing', async () => {
    const server = await start();
    const c = client(server);
    const params = { model: 'm', system: longSystem(), tools: [readTool], messages: [{ role: 'user' as const, content: 'How many tokens?' }] };
    const counted = await c.messages.countTokens(params);
    server.script({ reply: { content: 'ok' } });
    const res = await c.messages.create({ ...params, max_tokens: 10 });
    const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = res.usage;
    expect(counted.input_tokens).toBe(input_tokens + (cache_creation_input_tokens ?? 0) + (cache_read_input_tokens ?? 0));
    expect(server.requests).toHaveLength(1);
    const bad = await fetch(`${server.url}/v1/messages/count_tokens?beta=true`, { method: 'POST', body: JSON.stringify({ model: 'm' }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { type: string }).type).toBe('error');
  });

  it('answers scripted errors and bad input in the Anthropic error shape', async () => {
    const server = await start();
    server.script(
      { error: { status: 429, message: 'slow down', headers: { 'retry-after': '0' } } },
      { error: { status: 529, message: 'Overloaded' } },
      { error: { status: 400, message: 'prompt is too long: 200123 tokens > 200000 maximum' } },
    );
    const c = client(server);
    const send = (): Promise<unknown> => c.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    const limited = await caught(send());
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).type).toBe('rate_limit_error');
    expect((limited as RateLimitError).requestID).toBe('req_loopback_0');
    const overloaded = await caught(send());
    expect(overloaded).toBeInstanceOf(OverloadedError);
    expect((overloaded as OverloadedError).type).toBe('overloaded_error');
    const tooLong = await caught(send());
    expect(tooLong).toBeInstanceOf(BadRequestError);
    expect((tooLong as BadRequestError).apiMessage).toContain('prompt is too long');
    const exhausted = await caught(send());
    expect(exhausted).toBeInstanceOf(InternalServerError);

    const post = async (body: string): Promise<{ status: number; json: unknown }> => {
      const res = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: res.status, json: await res.json() };
    };
    const noMaxTokens = await post(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }));
    expect(noMaxTokens.status).toBe(400);
    expect(noMaxTokens.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') as unknown } });
    const badBlock = await post(JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }));
    expect(badBlock.status).toBe(400);
    expect((await post('{"model":')).json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const unknown = await fetch(`${server.url}/v1/messages/batches`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { type: string }).type).toBe('error');
    expect(server.requests).toHaveLength(4);
  });
});
