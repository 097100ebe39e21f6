import { describe, expect, it } from 'vitest';
import { StreamedReply, isUsageOnlyChunk, replyOfCompletion } from '../src/chat-reply.ts';

const sse = (chunks: object[]) => [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'].join('');

describe('chat replies', () => {
  it('reassembles content, tool-call ids, the finish reason and usage from a stream split anywhere', () => {
    const text = sse([
      { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] },
      { choices: [{ index: 0, delta: { content: 'lo' } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'c2', function: { name: 'b', arguments: '' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'a', arguments: '{' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '}' } }] } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { choices: [], usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, prompt_tokens_details: { cached_tokens: 4 } } },
    ]);
    const reply = new StreamedReply();
    for (let i = 0; i < text.length; i += 7) reply.feed(text.slice(i, i + 7));
    expect(reply.complete).toBe(true);
    expect(reply.reply()).toEqual({ content: 'Hello', toolCallIds: ['c1', 'c2'], finishReason: 'tool_calls', usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, cached_tokens: 4 } });
  });

  it('is not complete when the stream broke off', () => {
    const reply = new StreamedReply();
    reply.feed(sse([{ choices: [{ index: 0, delta: { content: 'Hel' } }] }]).replace('data: [DONE]\n\n', ''));
    expect(reply.complete).toBe(false);
  });

  it('reads a non-streamed completion', () => {
    expect(replyOfCompletion({ choices: [{ message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1 } })).toEqual({
      content: 'ok',
      toolCallIds: [],
      finishReason: 'stop',
      usage: { prompt_tokens: 5, completion_tokens: 1 },
    });
    expect(replyOfCompletion({ error: { message: 'no' } })).toBeNull();
  });

  it('recognises only the usage-only chunk', () => {
    expect(isUsageOnlyChunk(JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }))).toBe(true);
    expect(isUsageOnlyChunk(JSON.stringify({ choices: [{ delta: { content: 'usage' } }] }))).toBe(false);
    expect(isUsageOnlyChunk('[DONE]')).toBe(false);
  });
});
