import { computeBoundaryIndex } from '@baton/actors';
import { countTokensOnce } from '@baton/memory-store';
import type { Message } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { indexMessages } from '../../src/rebuild/message-index.ts';

const OUTPUT = Array.from({ length: 60 }, (_, i) => `export const line${i} = ${i};`).join('\n');
const native = (id: string, role: Message['role'], form: Record<string, unknown>, extra: Partial<Message> = {}): Message => ({ id, role, content: null, native: form, ...extra });

/** One tool call and its result, then a short answer, in each API's own shape. */
const CONVERSATIONS: Record<string, Message[]> = {
  'openai-chat': [
    { id: 'u', role: 'user', content: 'Read the file.' },
    { id: 'a1', role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a.ts"}' } }], finish_reason: 'tool_calls' },
    { id: 't', role: 'tool', tool_call_id: 'c1', content: OUTPUT },
    { id: 'a2', role: 'assistant', content: 'Done.', finish_reason: 'stop' },
  ],
  'openai-responses': [
    native('u', 'user', { role: 'user', content: [{ type: 'input_text', text: 'Read the file.' }] }),
    native('a1', 'assistant', { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{"path":"a.ts"}' }, { finish_reason: 'tool_calls' }),
    native('t', 'tool', { type: 'function_call_output', call_id: 'c1', output: OUTPUT }),
    native('a2', 'assistant', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }, { finish_reason: 'stop' }),
  ],
  'anthropic-messages': [
    native('u', 'user', { role: 'user', content: [{ type: 'text', text: 'Read the file.' }] }),
    native('a1', 'assistant', { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'read', input: { path: 'a.ts' } }] }, { finish_reason: 'tool_calls' }),
    native('t', 'tool', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: OUTPUT, is_error: false }] }),
    native('a2', 'assistant', { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }, { finish_reason: 'stop' }),
  ],
};

describe('message index: token counts in every API', () => {
  it.each(Object.keys(CONVERSATIONS))('%s: a tool result counts its output, once', (api) => {
    const index = indexMessages(CONVERSATIONS[api] as Message[]);
    expect(index[2]?.role).toBe('tool');
    expect(index[2]?.tokens).toBe(countTokensOnce(OUTPUT));
  });

  it('anthropic: a user turn with tool results and text counts both', () => {
    const turn = native('t', 'tool', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: OUTPUT }] }, { type: 'text', text: 'Also check b.ts.' }] });
    expect(indexMessages([turn])[0]?.tokens).toBe(countTokensOnce(`Also check b.ts.${OUTPUT}`));
  });

  it.each(Object.keys(CONVERSATIONS))('%s: the boundary leaves a tail of the same size (a large result counts toward it)', (api) => {
    const index = indexMessages(CONVERSATIONS[api] as Message[]);
    expect(computeBoundaryIndex(index, { minTokens: 60, maxTokens: 400, minTextMessages: 1 })).toBe(2);
  });
});
