import { describe, expect, it } from 'vitest';
import { keepingToolCalls, keepingToolResults, providerMessages, userTextMessage, withToolOutputs } from '../../src/api/native-messages.ts';
import type { Message } from '../../src/messages.ts';

const native = (id: string, role: Message['role'], form: Record<string, unknown>): Message => ({ id, role, content: null, native: form });

describe('native message builders', () => {
  it('makes a user text message in each API', () => {
    expect(userTextMessage('openai-chat', 'b', 'hi')).toEqual({ id: 'b', role: 'user', content: 'hi' });
    expect(userTextMessage('openai-responses', 'b', 'hi').native).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] });
    expect(userTextMessage('anthropic-messages', 'b', 'hi').native).toEqual({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
  });

  it('replaces tool outputs in each form, leaving the original untouched', () => {
    const chat: Message = { id: 't', role: 'tool', tool_call_id: 'c', content: 'long' };
    expect(withToolOutputs(chat, 'X').content).toBe('X');
    const item = native('o', 'tool', { type: 'function_call_output', call_id: 'c', output: 'long' });
    expect(withToolOutputs(item, 'X').native).toEqual({ type: 'function_call_output', call_id: 'c', output: 'X' });
    expect(item.native?.['output']).toBe('long');
    const turn = native('r', 'tool', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c', content: 'long', is_error: false }, { type: 'text', text: 'keep me' }] });
    expect(withToolOutputs(turn, 'X').native).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c', content: 'X', is_error: false }, { type: 'text', text: 'keep me' }] });
  });

  it('keeps only answered calls and only results of kept calls', () => {
    const keep = new Set(['c1']);
    const chat: Message = { id: 'a', role: 'assistant', content: null, tool_calls: [{ id: 'c1' }, { id: 'c2' }] };
    expect(keepingToolCalls(chat, keep)?.tool_calls).toEqual([{ id: 'c1' }]);
    expect(keepingToolCalls(chat, new Set())).toBeNull();
    expect(keepingToolCalls(native('f', 'assistant', { type: 'function_call', call_id: 'c2', name: 'x', arguments: '{}' }), keep)).toBeNull();
    const anthropic = native('a', 'assistant', { role: 'assistant', content: [{ type: 'text', text: 't' }, { type: 'tool_use', id: 'c1', name: 'x', input: {} }, { type: 'tool_use', id: 'c2', name: 'x', input: {} }] });
    expect((keepingToolCalls(anthropic, keep)?.native?.['content'] as unknown[]).length).toBe(2);
    const results = native('r', 'tool', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: 'o' }] });
    expect(keepingToolResults(results, keep)).toBeNull();
    expect(keepingToolResults(native('o', 'tool', { type: 'function_call_output', call_id: 'c1', output: 'o' }), keep)).not.toBeNull();
  });

  it('joins Baton\'s user message with a user neighbour for Anthropic, never two of the agent\'s', () => {
    const boundary = userTextMessage('anthropic-messages', 'baton-rebuild-s-1', 'checkpoint');
    const u1 = native('u1', 'user', { role: 'user', content: 'first' });
    const u2 = native('u2', 'user', { role: 'user', content: [{ type: 'text', text: 'second' }] });
    const out = providerMessages([boundary, u1, u2], 'anthropic-messages');
    expect(out).toEqual([{ role: 'user', content: [{ type: 'text', text: 'checkpoint' }, { type: 'text', text: 'first' }] }, u2.native]);
    // The agent's own messages are sent as they were (the very objects).
    expect(providerMessages([u1, u2], 'anthropic-messages')[0]).toBe(u1.native);
    expect(providerMessages([boundary, u1], 'openai-responses')).toHaveLength(2);
  });
});
