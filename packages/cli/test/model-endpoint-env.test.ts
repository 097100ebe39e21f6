import { describe, expect, it } from 'vitest';
import { EnvError, anthropicEndpointFromEnv } from '../src/daemon/model-endpoint-env.ts';

/** Which variable an `EnvError` thrown by `run` names (undefined when it does not throw one). */
function named(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    if (err instanceof EnvError) return err.variable;
    throw err;
  }
}

describe('the Anthropic endpoint from the environment', () => {
  it('is absent when neither variable is set', () => {
    expect(anthropicEndpointFromEnv({})).toBeNull();
    expect(anthropicEndpointFromEnv({ ANTHROPIC_BASE_URL: ' ', ANTHROPIC_API_KEY: '' })).toBeNull();
  });

  it("takes the key, and Anthropic's own URL unless one is given", () => {
    expect(anthropicEndpointFromEnv({ ANTHROPIC_API_KEY: 'sk-ant-1' })).toEqual({ baseURL: 'https://api.anthropic.com', apiKey: 'sk-ant-1' });
    expect(anthropicEndpointFromEnv({ ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9000' })).toEqual({ baseURL: 'http://127.0.0.1:9000', apiKey: 'sk-ant-1' });
  });

  it('refuses a base URL without a key, or one that is not an http(s) URL, naming the variable', () => {
    expect(named(() => anthropicEndpointFromEnv({ ANTHROPIC_BASE_URL: 'https://api.anthropic.com' }))).toBe('ANTHROPIC_API_KEY');
    expect(named(() => anthropicEndpointFromEnv({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'not a url' }))).toBe('ANTHROPIC_BASE_URL');
    expect(named(() => anthropicEndpointFromEnv({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'ftp://example.com' }))).toBe('ANTHROPIC_BASE_URL');
  });
});
