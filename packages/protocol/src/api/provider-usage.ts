import type { ProviderApi } from '../enums.ts';
import type { Usage } from '../messages.ts';
import { field } from './native-parts.ts';

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

/**
 * A provider's usage object in Baton's terms (`Message.usage`), every original field kept besides:
 * - chat: `prompt_tokens`, `completion_tokens`, `total_tokens`; cached = `prompt_tokens_details.cached_tokens`;
 * - Responses: prompt = `input_tokens` (cached ones included), completion = `output_tokens`, total = `total_tokens`;
 *   cached = `input_tokens_details.cached_tokens`;
 * - Anthropic: prompt = `input_tokens` + `cache_creation_input_tokens` + `cache_read_input_tokens` (its `input_tokens`
 *   counts only what follows the last cache breakpoint), completion = `output_tokens`; cached =
 *   `cache_read_input_tokens` (tokens written to the cache are not cached reads).
 * Null when the object has none of the API's fields.
 */
export function usageFromProvider(api: ProviderApi, raw: unknown): Usage | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  switch (api) {
    case 'openai-chat': {
      if (r['prompt_tokens'] === undefined && r['completion_tokens'] === undefined) return null;
      const prompt = count(r['prompt_tokens']);
      const completion = count(r['completion_tokens']);
      return { ...r, prompt_tokens: prompt, completion_tokens: completion, total_tokens: count(r['total_tokens']) || prompt + completion, cached_tokens: count(field(r['prompt_tokens_details'], 'cached_tokens')) };
    }
    case 'openai-responses': {
      if (r['input_tokens'] === undefined && r['output_tokens'] === undefined) return null;
      const prompt = count(r['input_tokens']);
      const completion = count(r['output_tokens']);
      return { ...r, prompt_tokens: prompt, completion_tokens: completion, total_tokens: count(r['total_tokens']) || prompt + completion, cached_tokens: count(field(r['input_tokens_details'], 'cached_tokens')) };
    }
    case 'anthropic-messages': {
      if (r['input_tokens'] === undefined && r['output_tokens'] === undefined) return null;
      const prompt = count(r['input_tokens']) + count(r['cache_creation_input_tokens']) + count(r['cache_read_input_tokens']);
      const completion = count(r['output_tokens']);
      return { ...r, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cached_tokens: count(r['cache_read_input_tokens']) };
    }
  }
}
