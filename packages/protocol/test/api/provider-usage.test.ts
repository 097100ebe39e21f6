import { describe, expect, it } from 'vitest';
import { usageFromProvider } from '../../src/api/provider-usage.ts';

describe('usageFromProvider', () => {
  it('maps each API\'s usage onto prompt, completion, total and cached tokens, keeping the original fields', () => {
    expect(usageFromProvider('openai-chat', { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 64 } })).toMatchObject({ prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, cached_tokens: 64 });
    expect(usageFromProvider('openai-responses', { input_tokens: 300, input_tokens_details: { cached_tokens: 256 }, output_tokens: 20, total_tokens: 320 })).toMatchObject({ prompt_tokens: 300, completion_tokens: 20, total_tokens: 320, cached_tokens: 256, input_tokens: 300 });
    expect(usageFromProvider('anthropic-messages', { input_tokens: 12, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 30 })).toMatchObject({ prompt_tokens: 2112, completion_tokens: 30, total_tokens: 2142, cached_tokens: 2000, cache_creation_input_tokens: 100 });
    expect(usageFromProvider('anthropic-messages', { foo: 1 })).toBeNull();
    expect(usageFromProvider('openai-chat', null)).toBeNull();
  });
});
