import { describe, expect, it } from 'vitest';
import { viewOf } from '../../src/api/message-view.ts';
import type { Message } from '../../src/messages.ts';

const native = (id: string, role: Message['role'], form: Record<string, unknown>): Message => ({ id, role, content: null, native: form });

describe('viewOf', () => {
  it('reads OpenAI chat messages from their own fields', () => {
    expect(viewOf({ id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'x' } }] })).toMatchObject({ role: 'user', text: 'hi', toolCalls: [] });
    const a = viewOf({ id: 'a', role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] });
    expect(a.toolCalls).toEqual([{ id: 'c1', name: 'read', arguments: '{"path":"a"}' }]);
    expect(viewOf({ id: 't', role: 'tool', tool_call_id: 'c1', content: 'out' })).toMatchObject({ role: 'tool', toolResults: [{ callId: 'c1', text: 'out' }] });
  });

  it('reads Responses items: messages, calls, custom calls, outputs, reasoning and hosted items', () => {
    expect(viewOf(native('d', 'system', { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'rules' }] }))).toMatchObject({ role: 'system', text: 'rules' });
    expect(viewOf(native('e', 'user', { role: 'user', content: 'easy' }))).toMatchObject({ role: 'user', text: 'easy' });
    expect(viewOf(native('o', 'assistant', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done', annotations: [] }] }))).toMatchObject({ role: 'assistant', text: 'done' });
    expect(viewOf(native('f', 'assistant', { type: 'function_call', call_id: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}' })).toolCalls).toEqual([{ id: 'c1', name: 'exec_command', arguments: '{"cmd":"ls"}' }]);
    expect(viewOf(native('p', 'assistant', { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' })).toolCalls).toEqual([{ id: 'c2', name: 'apply_patch', arguments: '*** Begin Patch' }]);
    expect(viewOf(native('r', 'tool', { type: 'function_call_output', call_id: 'c1', output: 'a\nb' }))).toMatchObject({ role: 'tool', text: 'a\nb', toolResults: [{ callId: 'c1', text: 'a\nb' }] });
    expect(viewOf(native('q', 'tool', { type: 'custom_tool_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'ok' }] })).toolResults).toEqual([{ callId: 'c2', text: 'ok' }]);
    expect(viewOf(native('z', 'assistant', { type: 'reasoning', summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: 'enc' }))).toMatchObject({ role: 'assistant', reasoning: true, text: 'plan' });
    expect(viewOf(native('w', 'assistant', { type: 'web_search_call', id: 'ws', status: 'completed' }))).toMatchObject({ role: 'assistant', opaque: true });
  });

  it('reads Anthropic messages: tool_use blocks are calls, a user turn of tool_result blocks is a tool turn', () => {
    const a = viewOf(
      native('a', 'assistant', {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'Reading both.' },
          { type: 'tool_use', id: 'tu1', name: 'Read', input: { file_path: '/a' } },
          { type: 'tool_use', id: 'tu2', name: 'Read', input: { file_path: '/b' } },
        ],
      }),
    );
    expect(a).toMatchObject({ role: 'assistant', text: 'Reading both.' });
    expect(a.toolCalls).toEqual([
      { id: 'tu1', name: 'Read', arguments: '{"file_path":"/a"}' },
      { id: 'tu2', name: 'Read', arguments: '{"file_path":"/b"}' },
    ]);
    const results = viewOf(
      native('r', 'tool', {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'tu1', content: 'A' },
          { type: 'tool_result', tool_use_id: 'tu2', content: [{ type: 'text', text: 'B' }] },
          { type: 'text', text: 'and also look at c' },
        ],
      }),
    );
    expect(results).toMatchObject({ role: 'tool', text: 'and also look at c' });
    expect(results.toolResults).toEqual([
      { callId: 'tu1', text: 'A' },
      { callId: 'tu2', text: 'B' },
    ]);
    expect(viewOf(native('u', 'user', { role: 'user', content: 'plain' }))).toMatchObject({ role: 'user', text: 'plain' });
  });
});
