import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';

/**
 * The SDK clients a worker calls models through: `openai` for chat completions and the Responses API, `anthropic`
 * for the Messages API (null when the daemon has no Anthropic endpoint configured).
 */
export interface ModelClients {
  readonly openai: OpenAI;
  readonly anthropic: Anthropic | null;
}

/** Thrown for a session whose API has no endpoint configured: the writer fails with `auth`, the reason named. */
export class NoEndpointError extends Error {
  readonly status = 401;
  constructor(api: string) {
    super(`no endpoint is configured for ${api} (set --anthropic-base-url / ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY)`);
    this.name = 'NoEndpointError';
  }
}

export function anthropicOf(clients: ModelClients): Anthropic {
  if (clients.anthropic === null) throw new NoEndpointError('anthropic-messages');
  return clients.anthropic;
}
