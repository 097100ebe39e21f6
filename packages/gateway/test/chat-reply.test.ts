import { describe, expect, it } from 'vitest';
import { StreamedReply, isUsageOnlyChunk, isUsageOnlyEvent, replyOfCompletion, sseEventEnd } from '../src/chat-reply.ts';

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

  it('finds SSE event ends in bytes, LF or CRLF, and only complete events', () => {
    const bytes = Buffer.from('data: {"a":"é"}\n\ndata: x\r\n\r\ndata: partial\n', 'utf8');
    const first = sseEventEnd(bytes, 0);
    expect(bytes.subarray(0, first).toString('utf8')).toBe('data: {"a":"é"}\n\n');
    const second = sseEventEnd(bytes, first);
    expect(bytes.subarray(first, second).toString('utf8')).toBe('data: x\r\n\r\n');
    expect(sseEventEnd(bytes, second)).toBe(-1);
  });

  it('recognises the usage-only event whatever its line endings', () => {
    const usage = JSON.stringify({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } });
    expect(isUsageOnlyEvent(Buffer.from(`data: ${usage}\n\n`))).toBe(true);
    expect(isUsageOnlyEvent(Buffer.from(`data:${usage}\r\n\r\n`))).toBe(true);
    expect(isUsageOnlyEvent(Buffer.from('data: [DONE]\n\n'))).toBe(false);
    expect(isUsageOnlyEvent(Buffer.from(`: comment\n\n`))).toBe(false);
  });
});
