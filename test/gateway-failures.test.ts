import { gzipSync } from 'node:zlib';
import { BatonGateway } from '@baton/gateway';
import type { Message } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import OpenAI from 'openai';
import { extractiveStep } from '@baton/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentResponder, bigFile, isWriterRequest } from './support/gateway-agent.ts';
import {
  GATEWAY_TOOLS,
  readChunks,
  recordTypes,
  recordedMessages,
  sseChunk,
  sseUsage,
  startGatewayRig,
  startRawUpstream,
  until,
  type GatewayRig,
  type RawUpstream,
} from './support/gateway-rig.ts';

const KEY = 'sk-failures-0000';
const SYSTEM = { role: 'system', content: 'You are a coding agent.' };
const U1 = { role: 'user', content: 'Fix the failing test in src/a.ts.' };
const U2 = { role: 'user', content: 'Now do the same for src/b.ts.' };

function body(messages: readonly object[], stream: boolean): string {
  return JSON.stringify({ model: 'gpt-4o', messages, tools: GATEWAY_TOOLS, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
}

async function post(base: string, text: string, signal?: AbortSignal): Promise<Response> {
  return await fetch(`${base}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: text, ...(signal !== undefined ? { signal } : {}) });
}

/** The ids of the recorded messages must be unique: every message recorded once. */
function expectRecordedOnce(messages: readonly Message[]): void {
  expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
}

const appendedCount = (rig: GatewayRig, sid: string): number => recordTypes(rig.log, sid).filter((t) => t === 'messages.appended').length;

describe('gateway: upstream failures', () => {
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

  it('relays a 429, a 500, a dropped connection and a stall; records nothing for them; the next successful call records correctly', async () => {
    const sid = 'fail-loopback';
    const base = rig.sessionURL(sid);
    rig.model.script({ reply: { content: 'Fixed src/a.ts.' } });
    const first = await post(base, body([SYSTEM, U1], false));
    const firstReply = JSON.parse(Buffer.concat(await readChunks(first)).toString('utf8')) as OpenAI.Chat.Completions.ChatCompletion;
    await until(() => recordedMessages(rig.log, sid).length === 1);
    const A1 = { role: 'assistant', content: 'Fixed src/a.ts.' };
    const history = [SYSTEM, U1, A1, U2];
    const typesBefore = recordTypes(rig.log, sid).filter((t) => t === 'messages.appended');

    // 429 with retry-after, relayed as sent.
    rig.model.script({ error: { status: 429, message: 'Rate limit reached', headers: { 'retry-after': '3', 'x-ratelimit-remaining-tokens': '0' } } });
    const limited = await post(base, body(history, true));
    const limitedBody = Buffer.concat(await readChunks(limited));
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(limitedBody.equals(Buffer.concat(rig.tap.exchanges.at(-1)?.chunks ?? []))).toBe(true);

    // 500, relayed as sent.
    rig.model.script({ error: { status: 500, message: 'The server had an error' } });
    const failed = await post(base, body(history, true));
    const failedBody = Buffer.concat(await readChunks(failed));
    expect(failed.status).toBe(500);
    expect(failedBody.equals(Buffer.concat(rig.tap.exchanges.at(-1)?.chunks ?? []))).toBe(true);

    // The upstream drops the connection: the gateway answers 502 (no credential in it).
    rig.model.script({ drop: true });
    const dropped = await post(base, body(history, true));
    const droppedText = Buffer.concat(await readChunks(dropped)).toString('utf8');
    expect(dropped.status).toBe(502);
    expect((JSON.parse(droppedText) as { error: { code: string } }).error.code).toBe('upstream_unreachable');
    expect(droppedText).not.toContain(KEY);

    // The upstream stalls; the agent gives up and disconnects: the gateway abandons the upstream request.
    rig.model.script({ stall: true });
    const stalled = post(base, body(history, true), AbortSignal.timeout(400));
    await expect(stalled).rejects.toThrow();
    await until(() => rig.tap.exchanges.at(-1)?.aborted === true);

    // Nothing of the failed calls reached the session.
    expect(recordTypes(rig.log, sid).filter((t) => t === 'messages.appended')).toEqual(typesBefore);
    expect(recordedMessages(rig.log, sid).map((m) => m.content)).toEqual([U1.content]);

    // The agent retries and succeeds: its reply echo carries the first call's usage, the new message is recorded once.
    rig.model.script({ reply: { content: 'Fixed src/b.ts.' } });
    const ok = await post(base, body(history, true));
    await readChunks(ok);
    expect(ok.status).toBe(200);
    await until(() => recordedMessages(rig.log, sid).length === 3);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded.map((m) => [m.role, m.content])).toEqual([
      ['user', U1.content],
      ['assistant', A1.content],
      ['user', U2.content],
    ]);
    expect(recorded[1]?.usage).toEqual({
      prompt_tokens: firstReply.usage?.prompt_tokens,
      completion_tokens: firstReply.usage?.completion_tokens,
      total_tokens: firstReply.usage?.total_tokens,
      cached_tokens: firstReply.usage?.prompt_tokens_details?.cached_tokens,
    });
    expect(recorded[1]?.finish_reason).toBe('stop');
    expectRecordedOnce(recorded);
    expect(appendedCount(rig, sid)).toBe(2);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });

  it('ends the agent\'s request when the upstream does not answer within the gateway\'s timeout, and records nothing', async () => {
    const gateway = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, upstreamTimeoutMs: 300 });
    try {
      const base = `${gateway.baseURL.replace(/\/v1$/, '')}/s/fail-timeout/v1`;
      rig.model.script({ stall: true });
      const res = await post(base, body([SYSTEM, U1], true));
      const text = Buffer.concat(await readChunks(res)).toString('utf8');
      // A gateway timeout, said as one (504), not as an unreachable upstream.
      expect(res.status).toBe(504);
      expect((JSON.parse(text) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'upstream_timeout', message: expect.stringContaining('--upstream-timeout') as unknown });
      expect(text).not.toContain(KEY);
      expect(recordedMessages(rig.log, 'fail-timeout')).toEqual([]);
      rig.model.script({ reply: { content: 'ok' } });
      const ok = await post(base, body([SYSTEM, U1], true));
      await readChunks(ok);
      await until(() => recordedMessages(rig.log, 'fail-timeout').length === 1);
    } finally {
      await gateway.close();
    }
  });
});

/** What the raw upstream does with its next request. */
type Behaviour = 'complete' | 'drop-mid-stream' | 'hold-after-first';

describe('gateway: broken streams and departing agents', () => {
  let rig: GatewayRig;
  let upstream: RawUpstream;
  let gateway: BatonGateway;
  const behaviours: Behaviour[] = [];
  let calls = 0;

  beforeAll(async () => {
    rig = await startGatewayRig();
    upstream = await startRawUpstream((_req, res) => {
      const behaviour = behaviours.shift() ?? 'complete';
      const n = ++calls;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseChunk({ role: 'assistant', content: `reply ${n}` }));
      if (behaviour === 'drop-mid-stream') {
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      if (behaviour === 'hold-after-first') return; // never goes on; the gateway must give it up
      res.write(sseChunk({}, 'stop'));
      res.write(sseUsage(100 * n, 5));
      res.end('data: [DONE]\n\n');
    });
    gateway = await BatonGateway.start({ upstream: upstream.url, client: rig.client });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await rig.stop();
  });

  const base = (sid: string): string => `${gateway.baseURL.replace(/\/v1$/, '')}/s/${sid}/v1`;

  it('records nothing for a stream the upstream broke off after its first chunk; the retry records each message once', async () => {
    const sid = 'broken-stream';
    const first = await post(base(sid), body([SYSTEM, U1], true));
    const firstText = Buffer.concat(await readChunks(first)).toString('utf8');
    await until(() => recordedMessages(rig.log, sid).length === 1);
    const A1 = { role: 'assistant', content: /"content":"(reply \d+)"/.exec(firstText)?.[1] ?? '' };
    const history = [SYSTEM, U1, A1, U2];

    behaviours.push('drop-mid-stream');
    const broken = await post(base(sid), body(history, true));
    expect(broken.status).toBe(200);
    await expect(readChunks(broken)).rejects.toThrow();
    // Give the gateway time to (not) record, then check.
    await new Promise((r) => setTimeout(r, 200));
    expect(recordedMessages(rig.log, sid).map((m) => m.content)).toEqual([U1.content]);

    const retry = await post(base(sid), body(history, true));
    await readChunks(retry);
    await until(() => recordedMessages(rig.log, sid).length === 3);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded.map((m) => m.content)).toEqual([U1.content, A1.content, U2.content]);
    // The first call's usage (100 × its number), not the broken call's.
    expect(recorded[1]?.usage?.prompt_tokens).toBe(100 * Number(A1.content.split(' ')[1]));
    expectRecordedOnce(recorded);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });

  it('aborts the upstream request when the agent disconnects mid-stream; the retry records each message once, and the session verifies', async () => {
    const sid = 'agent-left';
    const first = await post(base(sid), body([SYSTEM, U1], true));
    const firstText = Buffer.concat(await readChunks(first)).toString('utf8');
    await until(() => recordedMessages(rig.log, sid).length === 1);
    const A1 = { role: 'assistant', content: /"content":"(reply \d+)"/.exec(firstText)?.[1] ?? '' };
    const history = [SYSTEM, U1, A1, U2];

    behaviours.push('hold-after-first');
    const abort = new AbortController();
    const leaving = await post(base(sid), body(history, true), abort.signal);
    const reader = leaving.body?.getReader();
    const chunk = await reader?.read();
    expect(Buffer.from(chunk?.value ?? new Uint8Array()).toString('utf8')).toContain('reply');
    abort.abort();
    const held = upstream.requests.at(-1);
    await until(() => held?.closedEarly === true);

    // The agent retries the same request.
    const retry = await post(base(sid), body(history, true));
    await readChunks(retry);
    await until(() => recordedMessages(rig.log, sid).length === 3);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded.map((m) => m.content)).toEqual([U1.content, A1.content, U2.content]);
    expectRecordedOnce(recorded);
    // Resending the whole history to the daemon adds nothing: every message is there once.
    const again = await rig.client.append(sid, recorded.map((m) => ({ ...m })));
    expect(again.accepted).toBe(0);
    expect(again.duplicates).toBe(3);
    expect(recordedMessages(rig.log, sid)).toHaveLength(3);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });
});

describe('gateway: an agent that leaves while its context is rebuilt', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    // Usable window 8 000 tokens; writer calls take 400 ms each, so a rebuild takes a while.
    rig = await startGatewayRig({ gateway: { contextWindows: { 'gpt-4o': 60_000 } } });
    rig.model.setResponder((req) => (isWriterRequest(req) ? { delayMs: 400, then: extractiveStep(req) } : agentResponder(req)));
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('does not send the call upstream once the agent is gone; the retry is rewritten and recorded once', { timeout: 120_000 }, async () => {
    const sid = 'left-during-rebuild';
    const history: object[] = [SYSTEM];
    /** Sends the history; gives up (as an agent whose user pressed Esc) as soon as the daemon starts a rebuild. */
    async function send(): Promise<{ left: boolean; message?: OpenAI.Chat.Completions.ChatCompletionMessage }> {
      const rebuilds = recordTypes(rig.log, sid).filter((t) => t === 'rebuild.requested').length;
      const abort = new AbortController();
      const watch = setInterval(() => {
        if (recordTypes(rig.log, sid).filter((t) => t === 'rebuild.requested').length > rebuilds) abort.abort();
      }, 5);
      try {
        const res = await post(rig.sessionURL(sid), body(history, false), abort.signal);
        const completion = JSON.parse(Buffer.concat(await readChunks(res)).toString('utf8')) as OpenAI.Chat.Completions.ChatCompletion;
        const message = completion.choices[0]?.message;
        history.push({ role: 'assistant', content: message?.content ?? null, ...(message?.tool_calls !== undefined ? { tool_calls: message.tool_calls } : {}) });
        return { left: false, ...(message !== undefined ? { message } : {}) };
      } catch (err) {
        if (abort.signal.aborted) return { left: true };
        throw err;
      } finally {
        clearInterval(watch);
      }
    }

    let forwarded = 0;
    let left = false;
    for (let turn = 1; !left && turn < 20; turn++) {
      history.push({ role: 'user', content: `Please look at src/mod-${turn}.ts and fix the reducer.` });
      forwarded = rig.tap.exchanges.length;
      const first = await send();
      left = first.left;
      if (left) break;
      history.push({ role: 'tool', tool_call_id: first.message?.tool_calls?.[0]?.id ?? '', content: bigFile(turn) });
      forwarded = rig.tap.exchanges.length;
      left = (await send()).left;
    }
    expect(left).toBe(true);
    // The rebuild finishes without the agent. The agent retries: the session handles its calls in order, so by the
    // time the retry is answered the call it left is settled — and it was never sent upstream.
    await until(() => recordTypes(rig.log, sid).includes('rebuild.rendered'), 30_000);
    const retry = await send();
    expect(retry.left).toBe(false);
    expect(rig.tap.exchanges).toHaveLength(forwarded + 1);
    // The retry went upstream rewritten onto the rebuilt context, and each message is recorded once.
    const sent = rig.tap.exchanges.at(-1)?.body.toString('utf8') ?? '';
    expect(sent).toContain('## Checkpoint');
    expect((JSON.parse(sent) as { messages: unknown[] }).messages.length).toBeLessThan(history.length - 1);
    // The retry's new message (what followed the newest assistant message) is recorded once its reply is complete,
    // just after the agent got it.
    await until(() => recordedMessages(rig.log, sid).length >= history.length - 2);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded).toHaveLength(history.length - 2);
    expectRecordedOnce(recorded);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });
});

describe('gateway: closing', () => {
  it('closes while a stream is being relayed: the agent\'s request ends and the upstream request is abandoned', async () => {
    const rig = await startGatewayRig();
    const upstream = await startRawUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseChunk({ role: 'assistant', content: 'started' }));
    });
    const gateway = await BatonGateway.start({ upstream: upstream.url, client: rig.client });
    try {
      const res = await post(`${gateway.baseURL.replace(/\/v1$/, '')}/s/closing/v1`, body([SYSTEM, U1], true));
      const reader = res.body?.getReader();
      expect(Buffer.from((await reader?.read())?.value ?? new Uint8Array()).toString('utf8')).toContain('started');
      const closed = gateway.close().then(() => 'closed');
      const timeout = new Promise((resolve) => setTimeout(() => resolve('still open'), 3_000));
      expect(await Promise.race([closed, timeout])).toBe('closed');
      await expect(reader?.read()).rejects.toThrow();
      await until(() => upstream.requests[0]?.closedEarly === true);
      expect(recordedMessages(rig.log, 'closing')).toEqual([]);
    } finally {
      await gateway.close();
      await upstream.close();
      await rig.stop();
    }
  });
});

describe('gateway: replies the recorder must read', () => {
  let rig: GatewayRig;
  let upstream: RawUpstream;
  let gateway: BatonGateway;
  let calls = 0;

  beforeAll(async () => {
    rig = await startGatewayRig();
    // Compresses its JSON answers whenever the client accepts it (as providers behind a CDN do).
    upstream = await startRawUpstream((req, res) => {
      const n = ++calls;
      const json = JSON.stringify({
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1000 * n, completion_tokens: 7, total_tokens: 1000 * n + 7 },
      });
      const accepts = String(req.headers['accept-encoding'] ?? '');
      if (accepts.includes('gzip')) {
        const zipped = gzipSync(json);
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': zipped.length });
        res.end(zipped);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
        res.end(json);
      }
    });
    gateway = await BatonGateway.start({ upstream: upstream.url, client: rig.client });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    await rig.stop();
  });

  it('records the usage of a reply the upstream would compress (the SDK accepts gzip)', async () => {
    const sid = 'compressed';
    const sdk = new OpenAI({ baseURL: `${gateway.baseURL.replace(/\/v1$/, '')}/s/${sid}/v1`, apiKey: KEY, maxRetries: 0 });
    const tools = GATEWAY_TOOLS as OpenAI.Chat.Completions.ChatCompletionTool[];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM.content },
      { role: 'user', content: U1.content },
    ];
    const first = await sdk.chat.completions.create({ model: 'gpt-4o', messages, tools });
    expect(first.choices[0]?.message.content).toMatch(/^answer \d+$/);
    messages.push({ role: 'assistant', content: first.choices[0]?.message.content ?? '' }, { role: 'user', content: U2.content });
    await sdk.chat.completions.create({ model: 'gpt-4o', messages, tools });
    await until(() => recordedMessages(rig.log, sid).length === 3);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded[1]?.usage).toEqual({ prompt_tokens: first.usage?.prompt_tokens, completion_tokens: 7, total_tokens: first.usage?.total_tokens });
    expect(upstream.requests.map((r) => r.headers['accept-encoding'])).toEqual(['identity', 'identity']);
    // A call the gateway does not record keeps the agent's accept-encoding: the compressed bytes are relayed as sent.
    const side = await sdk.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'A title for this, please.' }] });
    expect(side.choices[0]?.message.content).toMatch(/^answer \d+$/);
    expect(upstream.requests.at(-1)?.headers['accept-encoding']).toMatch(/gzip/);
  });
});
