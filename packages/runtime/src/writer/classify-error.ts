import type { Failure } from '@baton/actors';
// The SDK's error classes alone: loading the whole SDK to classify an error would defeat its lazy loading.
import * as anthropic from '@anthropic-ai/sdk/core/error';
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { NoEndpointError } from '../model/model-clients.ts';

/** A prompt over the model's window, as OpenAI (`context_length_exceeded`), Anthropic and compatible servers word it. */
const OVERFLOW = /context length|maximum context|too many tokens|prompt is too long|context window/i;

/**
 * Classifies an error of the `openai` or `@anthropic-ai/sdk` SDK into a writer failure:
 * 429, 5xx (Anthropic's 529 overloaded included) and network errors are transient and retryable; context overflow is
 * `overflow`; 401/403 (or no endpoint configured for the session's API) are `auth`; an abort is `cancelled`.
 */
export function classifyModelError(err: unknown): { failure: Failure; status: number | null } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof NoEndpointError) return { failure: { kind: 'auth', retryable: false, message }, status: null };
  if (err instanceof APIUserAbortError || err instanceof anthropic.APIUserAbortError) return { failure: { kind: 'cancelled', retryable: false, message }, status: null };
  if (err instanceof APIConnectionError || err instanceof anthropic.APIConnectionError) return { failure: { kind: 'transient', retryable: true, message }, status: null };
  if (err instanceof APIError || err instanceof anthropic.APIError) {
    const status = typeof err.status === 'number' ? err.status : null;
    // only a string can name the overflow (the SDKs type `code` loosely)
    const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : '';
    if (code === 'context_length_exceeded' || OVERFLOW.test(message)) return { failure: { kind: 'overflow', retryable: false, message }, status };
    if (status === 401 || status === 403) return { failure: { kind: 'auth', retryable: false, message }, status };
    if (status === 429 || status === 408 || (status !== null && status >= 500)) {
      return { failure: { kind: 'transient', retryable: true, message }, status };
    }
    return { failure: { kind: 'other', retryable: false, message }, status };
  }
  return { failure: { kind: 'other', retryable: false, message }, status: null };
}
