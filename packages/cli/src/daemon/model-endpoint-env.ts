import { type ModelEndpoint } from '@baton/runtime';
import { envName, envValue } from '../flags/settings-table.ts';

/** Where Anthropic's SDK sends requests when no base URL is given. */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** A missing or invalid environment variable; the message names it. */
export class EnvError extends Error {
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(message);
    this.name = 'EnvError';
    this.variable = variable;
  }
}

const BASE_URL = envName('openaiBaseUrl');
const API_KEY = envName('openaiApiKey');
const ANTHROPIC_BASE_URL = envName('anthropicBaseUrl');
const ANTHROPIC_API_KEY = envName('anthropicApiKey');

/**
 * The writer's model endpoint from `OPENAI_BASE_URL` and `OPENAI_API_KEY` (both required; the base URL must be an
 * http(s) URL). Throws `EnvError` naming the variable.
 */
export function modelEndpointFromEnv(env: NodeJS.ProcessEnv, writerModel: string | undefined): ModelEndpoint {
  const baseURL = env[BASE_URL];
  if (baseURL === undefined || baseURL.trim() === '') {
    throw new EnvError(BASE_URL, `${BASE_URL} is not set: point it at an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1`);
  }
  httpUrl(BASE_URL, baseURL);
  const apiKey = envValue(env, 'openaiApiKey');
  if (apiKey === undefined) {
    throw new EnvError(API_KEY, `${API_KEY} is not set: the writer needs an API key for ${BASE_URL}`);
  }
  return { baseURL, apiKey, ...(writerModel !== undefined ? { writerModel } : {}) };
}

/** Throws `EnvError` naming `variable` unless `value` is an http(s) URL. */
function httpUrl(variable: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EnvError(variable, `${variable} is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EnvError(variable, `${variable} must be an http(s) URL, got ${value}`);
}

/**
 * The Anthropic Messages endpoint of the writers of `anthropic-messages` sessions, from `ANTHROPIC_API_KEY` and
 * `ANTHROPIC_BASE_URL` (default Anthropic's own, as its SDK has it: the URL without `/v1`). Null when neither is set
 * (such sessions' writers then fail, naming the missing endpoint); a base URL without a key is refused, naming the
 * key. Throws `EnvError` naming the variable.
 */
export function anthropicEndpointFromEnv(env: NodeJS.ProcessEnv): { baseURL: string; apiKey: string } | null {
  const baseURL = env[ANTHROPIC_BASE_URL]?.trim() ?? '';
  const apiKey = envValue(env, 'anthropicApiKey') ?? '';
  if (baseURL === '' && apiKey === '') return null;
  if (apiKey === '') throw new EnvError(ANTHROPIC_API_KEY, `${ANTHROPIC_BASE_URL} is set but ${ANTHROPIC_API_KEY} is not: the writers of Anthropic Messages sessions need a key`);
  if (baseURL !== '') httpUrl(ANTHROPIC_BASE_URL, baseURL);
  return { baseURL: baseURL === '' ? ANTHROPIC_DEFAULT_BASE_URL : baseURL, apiKey };
}

/** `BATON_DISABLE_CHECKPOINT=1` (or `true`) disables writers and checkpoint rebuilds. */
export function checkpointDisabledFromEnv(env: NodeJS.ProcessEnv): boolean {
  const value = envValue(env, 'disableCheckpoint')?.trim().toLowerCase();
  return value === '1' || value === 'true';
}
