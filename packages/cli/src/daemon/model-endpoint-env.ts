import { type ModelEndpoint } from '@baton/runtime';

/** A missing or invalid environment variable; the message names it. */
export class EnvError extends Error {
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(message);
    this.name = 'EnvError';
    this.variable = variable;
  }
}

/**
 * The writer's model endpoint from `OPENAI_BASE_URL` and `OPENAI_API_KEY` (both required; the base URL must be an
 * http(s) URL). Throws `EnvError` naming the variable.
 */
export function modelEndpointFromEnv(env: NodeJS.ProcessEnv, writerModel: string | undefined): ModelEndpoint {
  const baseURL = env['OPENAI_BASE_URL'];
  if (baseURL === undefined || baseURL.trim() === '') {
    throw new EnvError('OPENAI_BASE_URL', 'OPENAI_BASE_URL is not set: point it at an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1');
  }
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new EnvError('OPENAI_BASE_URL', `OPENAI_BASE_URL is not a URL: ${baseURL}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EnvError('OPENAI_BASE_URL', `OPENAI_BASE_URL must be an http(s) URL, got ${baseURL}`);
  }
  const apiKey = env['OPENAI_API_KEY'];
  if (apiKey === undefined || apiKey === '') {
    throw new EnvError('OPENAI_API_KEY', 'OPENAI_API_KEY is not set: the writer needs an API key for OPENAI_BASE_URL');
  }
  return { baseURL, apiKey, ...(writerModel !== undefined ? { writerModel } : {}) };
}

/** `BATON_DISABLE_CHECKPOINT=1` (or `true`) disables writers and checkpoint rebuilds. */
export function checkpointDisabledFromEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env['BATON_DISABLE_CHECKPOINT']?.trim().toLowerCase();
  return value === '1' || value === 'true';
}
