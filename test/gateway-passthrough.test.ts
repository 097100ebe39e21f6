import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BatonGateway } from '@baton/gateway';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  GATEWAY_TOOLS,
  closeServer,
  listen,
  readChunks,
  recordedMessages,
  sseChunk,
  sseUsage,
  startGatewayRig,
  startRawUpstream,
  until,
  type GatewayRig,
  type RawUpstream,
} from './support/gateway-rig.ts';

const KEY = 'sk-passthrough-0000';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

/**
 * A request body as an agent might write it: keys out of the usual order, odd whitespace, unicode escapes next to raw
 * UTF-8, fields and tool types the gateway does not know. Everything about it must reach the upstream as it is.
 */
function oddBody(options: { stream: boolean; includeUsage?: boolean; user?: string }): string {
  const streamPart = options.stream ? `"stream" :true,${options.includeUsage === true ? ' "stream_options": {"include_usage":true ,"x_extra":1},' : ''}` : '';
  return (
    '{\n  "temperature": 0.25e0 ,\t"messages":[ {"content":"Tu es pr\\u00eat ? \\ud83d\\ude00 «naïve» ✓","role":"system"},\n' +
    `   {"role" : "user","content":"${options.user ?? 'List the files \\/ please'}", "x_meta": {"b":2,"a":1}}],` +
    ` ${streamPart}"tools":[{"type":"web_search","search_context_size":"low"},` +
    `{"function":{"parameters":{"required":["file_path"],"properties":{"file_path":{"type":"string"}},"type":"object"},"name":"read_file"},"type":"function"}],` +
    '"model":"gpt-4o-mini","metadata":{"z":null,"a":[1.0,2e3]},"unknown_field":{"nested":[true,false,null]}  }\n'
  );
}

async function post(url: string, body: string | Uint8Array, headers: Record<string, string> = auth): Promise<Response> {
  return await fetch(`${url}/chat/completions`, { method: 'POST', headers, body });
}

/** SSE events (`data: …\n\n`) of a byte string. */
const events = (text: string): string[] => text.split(/(?<=\n\n)/).filter((e) => e !== '');

describe('gateway pass-through', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig();
  });
  afterAll(async () => {
    await rig.stop();
  });
  beforeEach(() => {
    rig.model.reset();
  });

  it('forwards a non-streamed request byte for byte and relays the response bytes, status and headers as the upstream sent them', async () => {
    rig.model.script({ reply: { content: 'Voilà: a.ts, b.ts ✓' } });
    const body = oddBody({ stream: false });
    const res = await post(rig.sessionURL('pt-plain'), Buffer.from(body, 'utf8'));
    const got = Buffer.concat(await readChunks(res));
    expect(res.status).toBe(200);
    // The upstream got the agent's bytes, and the agent got the upstream's.
    expect(Buffer.from(rig.model.requests[0]?.rawBody ?? '', 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true);
    const ex = rig.tap.exchanges.at(-1);
    expect(ex?.body.equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(ex?.path).toBe('/v1/chat/completions');
    expect(got.equals(Buffer.concat(ex?.chunks ?? []))).toBe(true);
    expect(res.headers.get('content-type')).toBe(ex?.responseHeaders?.['content-type']);
    // The agent's own credential went upstream.
    expect(rig.model.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    // And the call was recorded (it has tools): the user message, once the call succeeded.
    await until(() => recordedMessages(rig.log, 'pt-plain').length === 1);
  });

  it('forwards a streamed request that asked for usage byte for byte, and relays the SSE stream byte for byte', async () => {
    rig.model.script({ reply: { content: 'streamed ✓ reply with «quotes» and more words' } });
    const body = oddBody({ stream: true, includeUsage: true });
    const res = await post(rig.sessionURL('pt-stream'), body);
    const got = Buffer.concat(await readChunks(res)).toString('utf8');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(rig.model.requests[0]?.rawBody).toBe(body);
    const ex = rig.tap.exchanges.at(-1);
    const sent = Buffer.concat(ex?.chunks ?? []).toString('utf8');
    expect(got).toBe(sent);
    expect(events(got).some((e) => e.includes('"choices":[],"usage"'))).toBe(true);
    expect(got.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('asks the upstream for usage when the agent did not, and leaves only that usage chunk out of what the agent gets', async () => {
    rig.model.script({ reply: { content: 'no usage asked for' } });
    const body = oddBody({ stream: true });
    const res = await post(rig.sessionURL('pt-nousage'), body);
    const got = Buffer.concat(await readChunks(res)).toString('utf8');
    const raw = rig.model.requests[0]?.rawBody ?? '';
    // The agent's bytes, with one member added before the closing brace.
    const close = body.lastIndexOf('}');
    expect(raw.startsWith(body.slice(0, close).trimEnd())).toBe(true);
    expect(raw.endsWith(body.slice(close))).toBe(true);
    expect(JSON.parse(raw)).toEqual({ ...(JSON.parse(body) as object), stream_options: { include_usage: true } });
    const sent = Buffer.concat(rig.tap.exchanges.at(-1)?.chunks ?? []).toString('utf8');
    const usageEvents = events(sent).filter((e) => e.includes('"choices":[],"usage"'));
    expect(usageEvents).toHaveLength(1);
    expect(got).toBe(events(sent).filter((e) => !usageEvents.includes(e)).join(''));
    expect(got).not.toContain('"usage"');
  });

  it('forwards GET /v1/models', async () => {
    const res = await fetch(`${rig.gateway.baseURL}/models`, { headers: { authorization: `Bearer ${KEY}` } });
    const got = Buffer.concat(await readChunks(res));
    const ex = rig.tap.exchanges.at(-1);
    expect(ex?.method).toBe('GET');
    expect(ex?.path).toBe('/v1/models');
    expect(res.status).toBe(200);
    expect(got.equals(Buffer.concat(ex?.chunks ?? []))).toBe(true);
    expect((JSON.parse(got.toString('utf8')) as { object: string }).object).toBe('list');
    // Through the SDK too, with a session prefix.
    const sdk = new OpenAI({ baseURL: rig.sessionURL('pt-models'), apiKey: KEY, maxRetries: 0 });
    const models = await sdk.models.list();
    expect(models.data.map((m) => m.id)).toContain('loopback');
  });

  it('relays upstream errors with their status, headers and body as sent', async () => {
    rig.model.script(
      { error: { status: 429, message: 'slow down', headers: { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-tokens': '6m0s' } } },
      { error: { status: 400, message: 'bad field', code: 'invalid_value' } },
    );
    for (const status of [429, 400]) {
      const res = await post(rig.sessionURL('pt-errors'), oddBody({ stream: true }));
      const got = Buffer.concat(await readChunks(res));
      const ex = rig.tap.exchanges.at(-1);
      expect(res.status).toBe(status);
      expect(got.equals(Buffer.concat(ex?.chunks ?? []))).toBe(true);
      if (status === 429) {
        expect(res.headers.get('retry-after')).toBe('7');
        expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
        expect(res.headers.get('x-ratelimit-reset-tokens')).toBe('6m0s');
      }
      expect((JSON.parse(got.toString('utf8')) as { error: { message: string } }).error.message).toBe(status === 429 ? 'slow down' : 'bad field');
    }
    // Nothing was recorded for the failed calls (the session was opened, but has no messages).
    expect(recordedMessages(rig.log, 'pt-errors')).toEqual([]);
  });

  it('relays through the SDK: a recorded conversation, and side calls (no tools, another model) forwarded but not recorded', async () => {
    const sdk = new OpenAI({ baseURL: rig.sessionURL('pt-side'), apiKey: KEY, maxRetries: 0 });
    const system = { role: 'system' as const, content: 'You are a coding agent.' };
    const tools = GATEWAY_TOOLS as OpenAI.Chat.Completions.ChatCompletionTool[];
    rig.model.script({ reply: { content: 'first answer' } });
    const first = await sdk.chat.completions.create({ model: 'gpt-4o', messages: [system, { role: 'user', content: 'hello' }], tools });
    expect(first.choices[0]?.message.content).toBe('first answer');
    // Title generation: no tools.
    rig.model.script({ reply: { content: 'A title' } });
    const title = await sdk.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'You are a title generator.' }, { role: 'user', content: 'hello' }] });
    expect(title.choices[0]?.message.content).toBe('A title');
    // Another model (a small model for summaries), with tools.
    rig.model.script({ reply: { content: 'small' } });
    const small = await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [system, { role: 'user', content: 'summarise' }], tools });
    expect(small.choices[0]?.message.content).toBe('small');
    // The streamed title call is forwarded as is too.
    rig.model.script({ reply: { content: 'Streamed title' } });
    const stream = await sdk.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'title?' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Streamed title');
    // The conversation goes on: its second call records the first reply (with usage) and the new user message.
    rig.model.script({ reply: { content: 'second answer' } });
    await sdk.chat.completions.create({
      model: 'gpt-4o',
      messages: [system, { role: 'user', content: 'hello' }, { role: 'assistant', content: 'first answer' }, { role: 'user', content: 'and then?' }],
      tools,
    });
    await until(() => recordedMessages(rig.log, 'pt-side').length === 3);
    const recorded = recordedMessages(rig.log, 'pt-side');
    expect(recorded.map((m) => m.content)).toEqual(['hello', 'first answer', 'and then?']);
    expect(recorded[1]?.usage?.prompt_tokens).toBe(first.usage?.prompt_tokens);
    expect(recorded[1]?.finish_reason).toBe('stop');
    // No side call opened a session of its own.
    const sessions = [...rig.log.streams('session/')];
    expect(sessions.filter((s) => !/^session\/pt-/.test(s))).toEqual([]);
    expect(rig.model.requests).toHaveLength(5);
  });
});

describe('gateway streaming latency', () => {
  let rig: GatewayRig;
  let gateway: BatonGateway;
  const sockets = new Set<Socket>();
  let release: () => void = () => {};
  let finished = false;
  const server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      finished = false;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: 'first' }));
      void gate.then(() => {
        res.write(chunk({ content: ' second' }));
        res.write(chunk({}, 'stop'));
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } })}\n\n`);
        finished = true;
        res.end('data: [DONE]\n\n');
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  beforeAll(async () => {
    rig = await startGatewayRig();
    const port = await listen(server);
    gateway = await BatonGateway.start({ upstream: `http://127.0.0.1:${port}/v1`, client: rig.client });
  });
  afterAll(async () => {
    await gateway.close();
    await closeServer(server, sockets);
    await rig.stop();
  });

  for (const includeUsage of [true, false]) {
    it(`relays the first SSE chunk before the upstream finished (include_usage ${includeUsage})`, async () => {
      const origin = gateway.baseURL.replace(/\/v1$/, '');
      const body = JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: `stream ${includeUsage}` }],
        tools: GATEWAY_TOOLS,
        stream: true,
        ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
      });
      const res = await post(`${origin}/s/latency-${includeUsage}/v1`, body);
      let firstAt = -1;
      const chunks = await readChunks(res, (chunk, i) => {
        if (i > 0) return;
        firstAt = Date.now();
        // Only once the agent holds the first chunk does the upstream go on.
        expect(finished).toBe(false);
        expect(chunk.toString('utf8')).toContain('"first"');
        release();
      });
      expect(firstAt).toBeGreaterThan(0);
      const text = Buffer.concat(chunks).toString('utf8');
      expect(text).toContain(' second');
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(text.includes('"usage"')).toBe(includeUsage);
    });
  }
});

describe('gateway: streams split anywhere', () => {
  let rig: GatewayRig;
  let upstream: RawUpstream;
  let gateway: BatonGateway;
  let sent = Buffer.alloc(0);

  beforeAll(async () => {
    rig = await startGatewayRig();
    // Sends its SSE stream in pieces cut inside multi-byte characters and inside events, with pauses between them so
    // the pieces arrive as separate reads.
    upstream = await startRawUpstream(async (_req, res) => {
      const text =
        sseChunk({ role: 'assistant', content: 'Prêt ✓ — 日本語 😀' }) +
        sseChunk({ content: ' «fin» é' }) +
        sseChunk({}, 'stop') +
        sseUsage(321, 9) +
        'data: [DONE]\n\n';
      const bytes = Buffer.from(text, 'utf8');
      sent = bytes;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const cuts = [...'✓日😀«é'].flatMap((ch) => {
        const at = bytes.indexOf(Buffer.from(ch, 'utf8'));
        return [at + 1, at + 2];
      });
      cuts.push(bytes.indexOf('"usage"'), bytes.length);
      cuts.sort((a, b) => a - b);
      let from = 0;
      for (const to of cuts) {
        res.write(bytes.subarray(from, to));
        from = to;
        await new Promise((r) => setTimeout(r, 15));
      }
      res.end();
    });
    gateway = await BatonGateway.start({ upstream: upstream.url, client: rig.client });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await rig.stop();
  });

  it('relays multi-byte characters cut across reads byte for byte, dropping only the usage chunk the agent did not ask for', async () => {
    const origin = gateway.baseURL.replace(/\/v1$/, '');
    const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'unicode' }], tools: GATEWAY_TOOLS, stream: true });
    const res = await post(`${origin}/s/split-utf8/v1`, body);
    const got = Buffer.concat(await readChunks(res));
    const usage = Buffer.from(sseUsage(321, 9), 'utf8');
    const at = sent.indexOf(usage);
    expect(at).toBeGreaterThan(0);
    expect(got.equals(Buffer.concat([sent.subarray(0, at), sent.subarray(at + usage.length)]))).toBe(true);
    // The recording read the usage from the chunk the agent did not get.
    const again = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'unicode' }, { role: 'assistant', content: 'Prêt ✓ — 日本語 😀 «fin» é' }, { role: 'user', content: 'next' }],
      tools: GATEWAY_TOOLS,
      stream: true,
    });
    await readChunks(await post(`${origin}/s/split-utf8/v1`, again));
    await until(() => recordedMessages(rig.log, 'split-utf8').length === 3);
    expect(recordedMessages(rig.log, 'split-utf8')[1]?.usage).toEqual({ prompt_tokens: 321, completion_tokens: 9, total_tokens: 330 });
  });
});
