import { describe, expect, it } from 'vitest';
import type { AgentApi } from '../src/agent-api.ts';
import { agentIdentity } from '../src/agent-identity.ts';
import { anthropicApi } from '../src/anthropic-api.ts';
import { chatApi } from '../src/chat-api.ts';
import { responsesApi } from '../src/responses-api.ts';

/*
 * Which new conversation on a session key is the same agent starting over (its slice inherits the previous slice's
 * checkpoint) and which is another one, a sub-agent: the system prompt and the tools decide, the history does not,
 * and Anthropic's moving cache markers do not count.
 */

const parse = (api: AgentApi, body: object) => {
  const req = api.parse(new TextEncoder().encode(JSON.stringify(body)));
  if (req === null) throw new Error('not a request');
  return req;
};
const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });

describe('agentIdentity', () => {
  it('chat: the same system prompt and tools with another history are the same agent; another prompt or tool set is not', () => {
    const body = (system: string, history: string, tools = [tool('read_file'), tool('bash')]) => ({
      model: 'gpt-4o',
      messages: [{ role: 'system', content: system }, { role: 'user', content: history }],
      tools,
    });
    const first = agentIdentity(chatApi, parse(chatApi, body('You are a coding agent.', 'Fix the reducer.')));
    expect(agentIdentity(chatApi, parse(chatApi, body('You are a coding agent.', 'Summary of the work so far: …')))).toBe(first);
    expect(agentIdentity(chatApi, parse(chatApi, body('You are a search sub-agent.', 'Fix the reducer.')))).not.toBe(first);
    expect(agentIdentity(chatApi, parse(chatApi, body('You are a coding agent.', 'Fix the reducer.', [tool('read_file')])))).not.toBe(first);
  });

  it('responses: instructions count as the system prompt', () => {
    const body = (instructions: string, text: string) => ({ model: 'gpt-5', instructions, input: [{ role: 'user', content: text }], tools: [{ type: 'function', name: 'shell', parameters: {} }] });
    const first = agentIdentity(responsesApi, parse(responsesApi, body('You are Codex.', 'one')));
    expect(agentIdentity(responsesApi, parse(responsesApi, body('You are Codex.', 'two')))).toBe(first);
    expect(agentIdentity(responsesApi, parse(responsesApi, body('You are a reviewer.', 'one')))).not.toBe(first);
  });

  it('anthropic: the system blocks count, their cache_control markers do not', () => {
    const body = (marked: boolean, text = 'You are Claude Code.') => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: [{ type: 'text', text, ...(marked ? { cache_control: { type: 'ephemeral' } } : {}) }],
      messages: [{ role: 'user', content: 'hello' }],
      tools: [{ name: 'Read', input_schema: { type: 'object' }, ...(marked ? { cache_control: { type: 'ephemeral' } } : {}) }],
    });
    const first = agentIdentity(anthropicApi, parse(anthropicApi, body(true)));
    expect(agentIdentity(anthropicApi, parse(anthropicApi, body(false)))).toBe(first);
    expect(agentIdentity(anthropicApi, parse(anthropicApi, body(true, 'You are a Task sub-agent.')))).not.toBe(first);
  });
});
