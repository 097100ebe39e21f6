import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopbackModel, type LoopbackModel } from '../../src/index.ts';

let server: LoopbackModel;

afterEach(async () => {
  await server.close();
});

const OUTPUT = 'line of a long tool output\n'.repeat(400);
const tool = { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } };

describe('a provider that counts otherwise than o200k (usageScale) and refuses a prompt above its window', () => {
  it('chat: tool outputs counted three times as heavy, in the usage and in the window check', async () => {
    server = await startLoopbackModel({ mode: 'scripted' });
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const openai = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const messages = [
      { role: 'user' as const, content: 'read it' },
      { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'read', arguments: '{"path":"a"}' } }] },
      { role: 'tool' as const, tool_call_id: 'c1', content: OUTPUT },
    ];
    const plain = (await openai.chat.completions.create({ model: 'm', messages, tools: [{ type: 'function', function: tool }] })).usage?.prompt_tokens ?? 0;
    await server.close();

    server = await startLoopbackModel({ mode: 'scripted', usageScale: { tool: 3 } });
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const scaled = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const heavy = (await scaled.chat.completions.create({ model: 'm', messages, tools: [{ type: 'function', function: tool }] })).usage?.prompt_tokens ?? 0;
    const toolTokens = countTokens(OUTPUT);
    expect(heavy - plain).toBe(2 * toolTokens);
    await server.close();

    // The same prompt against a window just below what it counts: refused as a provider refuses it, with its count.
    server = await startLoopbackModel({ mode: 'scripted', usageScale: { tool: 3 }, contextWindow: heavy - 1 });
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const small = new OpenAI({ baseURL: server.baseURL, apiKey: 'k', maxRetries: 0 });
    const refused = await small.chat.completions.create({ model: 'm', messages, tools: [{ type: 'function', function: tool }] }).then(
      () => null,
      (err: unknown) => err as { status?: number; code?: string; message?: string },
    );
    expect(refused?.status).toBe(400);
    expect(refused?.code).toBe('context_length_exceeded');
    expect(refused?.message).toContain(`resulted in ${heavy} tokens`);
    expect(server.requests).toHaveLength(1);
  });

  it('Anthropic: the window refusal in its own words, and scaled usage below it', async () => {
    server = await startLoopbackModel({ mode: 'scripted', usageScale: { tool: 2, text: 1.5 }, contextWindow: 1_000 });
    server.setResponder(() => ({ reply: { content: 'ok' } }));
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    const small = await anthropic.messages.create({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }] });
    const measured = countTokens(JSON.stringify([{ role: 'user', content: 'hello there' }]));
    expect(small.usage.input_tokens).toBeGreaterThan(measured);
    const big = anthropic.messages.create({
      model: 'm',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'read it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: OUTPUT }] },
      ],
    });
    const refusal = await big.then(
      () => null,
      (err: unknown) => err as { status?: number; message?: string },
    );
    expect(refusal?.status).toBe(400);
    expect(refusal?.message).toMatch(/prompt is too long: \d+ tokens > 1000 maximum/);
  });
});
