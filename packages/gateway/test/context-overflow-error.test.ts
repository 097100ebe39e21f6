import { describe, expect, it } from 'vitest';
import { isContextOverflowError, refusedTokens } from '../src/context-overflow-error.ts';

const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

describe('isContextOverflowError', () => {
  it.each([
    ['OpenAI', 400, json({ error: { message: "This model's maximum context length is 128000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } })],
    ['Anthropic', 400, json({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } })],
    ['vLLM', 400, json({ object: 'error', message: "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens", type: 'BadRequestError', code: 400 })],
    ['a plain-text body', 413, Buffer.from('the request exceeds the context window')],
    ['an error string', 400, json({ error: 'Input too long: too many tokens' })],
  ])('recognises %s', (_name, status, body) => {
    expect(isContextOverflowError(status, body)).toBe(true);
  });

  it.each([
    ['a rate limit', 429, json({ error: { message: 'maximum context length', code: 'rate_limit_exceeded' } })],
    ['another bad request', 400, json({ error: { message: 'Invalid value for tool_choice', code: 'invalid_value' } })],
    ['a server error', 500, json({ error: { message: 'context length', code: 'context_length_exceeded' } })],
    ['garbage', 400, Buffer.from([0xff, 0x00, 0x7b])],
  ])('does not mistake %s for one', (_name, status, body) => {
    expect(isContextOverflowError(status, body)).toBe(false);
  });
});

describe('refusedTokens', () => {
  it.each([
    ['OpenAI', json({ error: { message: "This model's maximum context length is 64000 tokens. However, your messages resulted in 93012 tokens. Please reduce the length of the messages.", code: 'context_length_exceeded' } }), 93_012],
    ['Anthropic', json({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }), 210_000],
    ['vLLM', json({ object: 'error', message: "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion).", code: 400 }), 39_000],
  ])('reads what %s counted', (_name, body, tokens) => {
    expect(refusedTokens(body)).toBe(tokens);
  });

  it('is null when the provider does not say', () => {
    expect(refusedTokens(json({ error: { message: 'Your input exceeds the context window of this model.', code: 'context_length_exceeded' } }))).toBeNull();
    expect(refusedTokens(Buffer.from([0xff, 0x00]))).toBeNull();
  });
});
