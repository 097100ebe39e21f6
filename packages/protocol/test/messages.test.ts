import { describe, expect, it } from 'vitest';
import { MessageSchema } from '../src/messages.ts';
import { parseRequest } from '../src/parse-request.ts';
import { AppendRequestSchema } from '../src/requests.ts';

describe('Message', () => {
  it('accepts OpenAI messages of every role and content shape', () => {
    const messages = [
      { id: 's', role: 'system', content: 'rules' },
      { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'x' } }] },
      {
        id: 'a',
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
        finish_reason: 'tool_calls',
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, cached_tokens: 8 },
        created_at: 1_700_000_000_000,
      },
      { id: 't', role: 'tool', content: 'file body', tool_call_id: 'c1', name: 'read', agent_id: 'sub-1' },
    ];
    expect(parseRequest(AppendRequestSchema, { messages }).messages).toEqual(messages);
  });

  it('returns the very objects it was given: key order, unknown fields and nested objects untouched', () => {
    const content = [{ text: 'hi', type: 'text', cache_control: { type: 'ephemeral' } }];
    const input = { content, refusal: null, role: 'assistant', audio: null, id: 'a1', annotations: [] };
    const parsed = parseRequest(AppendRequestSchema, { messages: [input] }).messages[0];
    expect(parsed).toBe(input);
    expect(Object.keys(parsed ?? {})).toEqual(['content', 'refusal', 'role', 'audio', 'id', 'annotations']);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(input));
  });

  it('treats null OpenAI-native fields as absent', () => {
    const input = { id: 'a', role: 'assistant', content: 'x', tool_calls: null, tool_call_id: null, name: null, finish_reason: null };
    expect(MessageSchema.safeParse(input).success).toBe(true);
  });

  it('keeps extra provider usage fields', () => {
    const usage = { prompt_tokens: 5, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 3 } };
    const parsed = MessageSchema.parse({ id: 'a', role: 'assistant', content: 'x', usage });
    expect(parsed.usage).toEqual(usage);
  });

  it.each([
    ['usage null', { usage: null }, 'usage'],
    ['agent_id null', { agent_id: null }, 'agent_id'],
    ['created_at as a string', { created_at: '2024-01-01' }, 'created_at'],
    ['content undefined', { content: undefined }, 'content'],
  ])('rejects %s', (_name, over, path) => {
    const result = MessageSchema.safeParse({ id: 'a', role: 'user', content: 'x', ...over });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual([path]);
  });
});
