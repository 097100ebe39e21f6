import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  PermissionDeniedError,
  RateLimitError,
} from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../src/index.ts';

const servers: LoopbackModel[] = [];

async function start(options: Parameters<typeof startLoopbackModel>[0] = { mode: 'scripted' }): Promise<LoopbackModel> {
  const server = await startLoopbackModel(options);
  servers.push(server);
  return server;
}

function client(server: LoopbackModel, extra: { maxRetries?: number; timeout?: number } = {}): OpenAI {
  return new OpenAI({ baseURL: server.baseURL, apiKey: 'test', maxRetries: 0, ...extra });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const hello: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello.' }];
const tools: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('loopback model: scripted replies', () => {
  it('answers scripted text and records the request', async () => {
    const server = await start();
    server.script({ reply: { content: 'hello there', reasoning: 'the user greets' } });
    const res = await client(server).chat.completions.create({ model: 'm1', messages: hello });
    expect(res.choices[0]?.message.content).toBe('hello there');
    expect(res.choices[0]?.finish_reason).toBe('stop');
    expect(res.model).toBe('m1');
    expect(res.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage?.completion_tokens).toBeGreaterThan(0);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.index).toBe(0);
    expect(server.requests[0]?.body.messages).toEqual(hello);
    expect(JSON.parse(server.requests[0]?.rawBody ?? '')).toEqual(server.requests[0]?.body);
    expect(server.requests[0]?.headers['authorization']).toBe('Bearer test');
    expect(server.stats().calls).toBe(1);
  });

  it('answers scripted tool calls with object or string arguments', async () => {
    const server = await start();
    server.script({
      reply: { tool_calls: [{ name: 'read', arguments: { path: '/a.md' } }, { name: 'read', arguments: '{"path":"/b.md"}', id: 'mine' }] },
    });
    const res = await client(server).chat.completions.create({ model: 'm', messages: hello, tools });
    const message = res.choices[0]?.message;
    expect(res.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message?.content).toBeNull();
    const calls = (message?.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [c] : []));
    expect(calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments) as unknown])).toEqual([
      ['call_0_0', 'read', { path: '/a.md' }],
      ['mine', 'read', { path: '/b.md' }],
    ]);
  });

  it('consumes steps in order, supports functions, delays and a default responder', async () => {
    const server = await start();
    server.script(
      { reply: { content: 'one' } },
      (req) => ({ reply: { content: `echo ${req.body.messages.length}` } }),
      { delayMs: 5, then: { reply: { content: 'late' } } },
    );
    server.setResponder(() => Promise.resolve({ reply: { content: 'default' } }));
    const c = client(server);
    const texts: (string | null | undefined)[] = [];
    for (let i = 0; i < 4; i++) texts.push((await c.chat.completions.create({ model: 'm', messages: hello })).choices[0]?.message.content);
    expect(texts).toEqual(['one', 'echo 1', 'late', 'default']);
    expect(server.pending()).toBe(0);
  });

  it('streams a reply as SSE with a final usage chunk', async () => {
    const server = await start();
    server.script({ reply: { content: 'streamed text', tool_calls: [{ name: 'read', arguments: { path: '/x' } }] } });
    const stream = await client(server).chat.completions.create({
      model: 'm',
      messages: hello,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let args = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(content).toBe('streamed text');
    expect(JSON.parse(args)).toEqual({ path: '/x' });
    expect(finish).toBe('tool_calls');
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it('fails loudly when the script is exhausted', async () => {
    const server = await start();
    const err = await caught(client(server).chat.completions.create({ model: 'm', messages: hello }));
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).message).toContain('loopback script exhausted');
  });

  it('lists models and resets its state', async () => {
    const server = await start();
    server.script({ reply: { content: 'x' } }, { reply: { content: 'y' } });
    const c = client(server);
    await c.chat.completions.create({ model: 'custom-model', messages: hello });
    const ids = (await c.models.list()).data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['loopback', 'custom-model']));
    server.reset();
    expect(server.requests).toHaveLength(0);
    expect(server.pending()).toBe(0);
    expect(server.stats()).toEqual({ calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 });
  });
});

describe('loopback model: errors map to the SDK error classes', () => {
  it.each([
    [{ status: 429, message: 'slow down', headers: { 'retry-after-ms': '10' } }, RateLimitError],
    [{ status: 500, message: 'boom' }, InternalServerError],
    [{ status: 503 }, InternalServerError],
    [{ status: 401, message: 'bad key', code: 'invalid_api_key' }, AuthenticationError],
    [{ status: 403, message: 'forbidden' }, PermissionDeniedError],
  ])('%o', async (error, errorClass) => {
    const server = await start();
    server.script({ error });
    const err = await caught(client(server).chat.completions.create({ model: 'm', messages: hello }));
    expect(err).toBeInstanceOf(errorClass);
    expect((err as InstanceType<typeof errorClass>).status).toBe(error.status);
  });

  it('carries the error code of a context overflow', async () => {
    const server = await start();
    server.script({ error: { status: 400, message: 'too long', code: 'context_length_exceeded' } });
    const err = await caught(client(server).chat.completions.create({ model: 'm', messages: hello }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).code).toBe('context_length_exceeded');
    expect((err as BadRequestError).type).toBe('invalid_request_error');
  });

  it('lets the SDK retry a 429 that carries retry-after-ms', async () => {
    const server = await start();
    server.script({ error: { status: 429, headers: { 'retry-after-ms': '1' } } }, { reply: { content: 'after retry' } });
    const res = await client(server, { maxRetries: 1 }).chat.completions.create({ model: 'm', messages: hello });
    expect(res.choices[0]?.message.content).toBe('after retry');
    expect(server.requests).toHaveLength(2);
  });

  it('drop destroys the socket: APIConnectionError', async () => {
    const server = await start();
    server.script({ drop: true });
    const err = await caught(client(server).chat.completions.create({ model: 'm', messages: hello }));
    expect(err).toBeInstanceOf(APIConnectionError);
  });

  it('stall + client timeout: APIConnectionTimeoutError, and close() still returns', async () => {
    const server = await start();
    server.script({ stall: true });
    const err = await caught(client(server, { timeout: 200 }).chat.completions.create({ model: 'm', messages: hello }));
    expect(err).toBeInstanceOf(APIConnectionTimeoutError);
    await server.close();
  });

  it('close() destroys a stalled request still waiting', async () => {
    const server = await start();
    server.script({ stall: true });
    const pending = caught(client(server).chat.completions.create({ model: 'm', messages: hello }));
    await expect.poll(() => server.requests.length).toBe(1);
    await server.close();
    expect(await pending).toBeInstanceOf(APIConnectionError);
  });

  it('never crashes on bad input: OpenAI-shaped 400s, then keeps serving', async () => {
    const server = await start();
    const post = (body: string): Promise<Response> =>
      fetch(`${server.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const malformed = await post('{"model": "m", "messages": [');
    expect(malformed.status).toBe(400);
    const body = (await malformed.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    const wrongShape = await post(JSON.stringify({ model: 'm', messages: 'hi' }));
    expect(wrongShape.status).toBe(400);
    expect(((await wrongShape.json()) as { error: { message: string } }).error.message).toContain('messages');
    const unknown = await fetch(`${server.url}/v2/nothing`);
    expect(unknown.status).toBe(404);
    expect(server.requests).toHaveLength(0);
    server.script({ reply: { content: 'still alive' } });
    const res = await client(server).chat.completions.create({ model: 'm', messages: hello });
    expect(res.choices[0]?.message.content).toBe('still alive');
  });
});

describe('loopback model: usage and simulated prefix cache', () => {
  const longSystem = Array.from({ length: 400 }, (_, i) => `Rule ${i}: keep the checkpoint faithful to the conversation.`).join('\n');

  it('credits a shared prefix and not an unrelated request', async () => {
    const server = await start();
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const c = client(server);
    const first: ChatCompletionMessageParam[] = [
      { role: 'system', content: longSystem },
      { role: 'user', content: 'First question about the parser.' },
    ];
    const r1 = await c.chat.completions.create({ model: 'm', messages: first, tools });
    const shared = r1.usage?.prompt_tokens ?? 0;
    expect(shared).toBeGreaterThan(2048);
    expect(r1.usage?.prompt_tokens_details?.cached_tokens).toBe(0);

    const second: ChatCompletionMessageParam[] = [...first, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'And now?' }];
    const r2 = await c.chat.completions.create({ model: 'm', messages: second, tools });
    const cached = r2.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(cached).toBeGreaterThanOrEqual(0.9 * shared);
    expect(cached).toBeLessThanOrEqual(shared);
    expect(cached % 128).toBe(0);

    const unrelated = await c.chat.completions.create({
      model: 'm',
      messages: [{ role: 'system', content: `${longSystem} (variant)` }, { role: 'user', content: 'Other.' }],
      tools,
    });
    expect(unrelated.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(server.stats()).toMatchObject({ calls: 3, cachedTokens: cached });
  });

  it('reports nothing below the minimum and honours a custom block size', async () => {
    const server = await start({ mode: 'scripted', cacheBlockTokens: 10, minCachedTokens: 20 });
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const c = client(server);
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'A short but repeated prompt with some words.' }];
    const r1 = await c.chat.completions.create({ model: 'm', messages });
    const r2 = await c.chat.completions.create({ model: 'm', messages });
    expect(r1.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const prompt = r2.usage?.prompt_tokens ?? 0;
    expect(r2.usage?.prompt_tokens_details?.cached_tokens).toBe(Math.floor(prompt / 10) * 10);

    const strict = await start({ mode: 'scripted' });
    strict.setResponder(() => ({ reply: { content: 'ok' } }));
    const s = client(strict);
    await s.chat.completions.create({ model: 'm', messages });
    const again = await s.chat.completions.create({ model: 'm', messages });
    expect(again.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });
});
