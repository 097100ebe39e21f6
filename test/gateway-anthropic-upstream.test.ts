import Anthropic from '@anthropic-ai/sdk';
import { startLoopbackModel, type LoopbackModel } from '@baton/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_TOOLS, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const ANTHROPIC_TOOLS = [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];

/**
 * One gateway for agents of both providers: with an Anthropic upstream of its own, Messages calls (and
 * `count_tokens`) go there and are recorded as before, while every other path keeps going to the main upstream.
 */
describe('gateway: an Anthropic upstream beside the main one', () => {
  let rig: GatewayRig;
  let anthropicModel: LoopbackModel;
  beforeAll(async () => {
    anthropicModel = await startLoopbackModel({ mode: 'scripted' });
    rig = await startGatewayRig({ gateway: { anthropicUpstream: anthropicModel.url } });
  });
  afterAll(async () => {
    await rig.stop();
    await anthropicModel.close();
  });

  it('sends Messages and count_tokens to the Anthropic upstream with the agent key, records them, and chat to the main upstream', { timeout: 60_000 }, async () => {
    const claude = new Anthropic({ baseURL: `${rig.origin}/s/anth-up`, apiKey: 'sk-ant-agent', maxRetries: 0 });
    anthropicModel.script({ reply: { content: 'Hello from the Anthropic upstream.' } });
    const messages = [{ role: 'user' as const, content: 'Read src/main.ts' }];
    const message = await claude.messages.create({ model: 'claude-test', max_tokens: 1024, system: 'You are a coding agent.', messages, tools: ANTHROPIC_TOOLS as never });
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Hello from the Anthropic upstream.' })]);
    const counted = await claude.messages.countTokens({ model: 'claude-test', system: 'You are a coding agent.', messages, tools: ANTHROPIC_TOOLS as never });
    expect(counted.input_tokens).toBeGreaterThan(0);
    // The agent's own credential went there (this SDK sends its key as a bearer token); count_tokens is not a model call.
    expect(anthropicModel.requests.map((r) => [r.path, r.headers.authorization])).toEqual([['/v1/messages', 'Bearer sk-ant-agent']]);

    const gpt = new OpenAI({ baseURL: rig.sessionURL('chat-up'), apiKey: 'sk-openai-agent', maxRetries: 0 });
    rig.model.script({ reply: { content: 'Hello from the main upstream.' } });
    const completion = await gpt.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'hi' }], tools: GATEWAY_TOOLS as never });
    expect(completion.choices[0]?.message.content).toBe('Hello from the main upstream.');
    // The main upstream got the chat call only: nothing of the Anthropic agent's.
    expect(rig.tap.exchanges.map((e) => e.path)).toEqual(['/v1/chat/completions']);

    // The Messages call is recorded in an Anthropic session, once the agent echoes the reply.
    anthropicModel.script({ reply: { content: 'Done.' } });
    await claude.messages.create({
      model: 'claude-test',
      max_tokens: 1024,
      system: 'You are a coding agent.',
      messages: [...messages, { role: 'assistant', content: message.content }, { role: 'user', content: 'Thanks' }],
      tools: ANTHROPIC_TOOLS as never,
    });
    await until(() => recordedMessages(rig.log, 'anth-up').length >= 3);
    const opened = [...rig.log.read('session/anth-up')][0]?.payload as { setup: { api?: string } };
    expect(opened.setup.api).toBe('anthropic-messages');
  });
});
