import type { Failure } from '@baton/actors';
import { APIConnectionError, APIError, APIUserAbortError } from 'openai';

/**
 * Classifies an error of the `openai` SDK into a writer failure (SPEC §2.5, reference §3.5): 429, 5xx and network
 * errors are transient and retryable; context overflow is `overflow`; 401/403 are `auth`; an abort is `cancelled`.
 */
export function classifyModelError(err: unknown): { failure: Failure; status: number | null } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof APIUserAbortError) return { failure: { kind: 'cancelled', retryable: false, message }, status: null };
  if (err instanceof APIConnectionError) return { failure: { kind: 'transient', retryable: true, message }, status: null };
  if (err instanceof APIError) {
    const status = typeof err.status === 'number' ? err.status : null;
    // the SDK types `code` as string | null | undefined; only a string can name the overflow
    const code = typeof err.code === 'string' ? err.code : '';
    if (code === 'context_length_exceeded' || /context length|maximum context|too many tokens/i.test(message)) {
      return { failure: { kind: 'overflow', retryable: false, message }, status };
    }
    if (status === 401 || status === 403) return { failure: { kind: 'auth', retryable: false, message }, status };
    if (status === 429 || status === 408 || (status !== null && status >= 500)) {
      return { failure: { kind: 'transient', retryable: true, message }, status };
    }
    return { failure: { kind: 'other', retryable: false, message }, status };
  }
  return { failure: { kind: 'other', retryable: false, message }, status: null };
}
