import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';

/** A client made on first use: the SDK behind it is loaded only by a worker that needs it. */
export type LazyClient<T> = () => Promise<T>;

/**
 * The SDK clients a worker calls models through: `openai` for chat completions and the Responses API, `anthropic`
 * for the Messages API (null when the daemon has no Anthropic endpoint configured; loaded on the first Anthropic
 * call, since most daemons never make one and the SDK costs each worker a third of a second and ~20 MB to load).
 */
export interface ModelClients {
  readonly openai: OpenAI;
  readonly anthropic: LazyClient<Anthropic> | null;
}

/** Memoises `make`: it runs once, on the first call; a failed load is tried again on the next call. */
export function lazyClient<T>(make: () => Promise<T>): LazyClient<T> {
  let made: Promise<T> | null = null;
  return () => {
    made ??= make().catch((err: unknown) => {
      made = null;
      throw err;
    });
    return made;
  };
}

/** Thrown for a session whose API has no endpoint configured: the writer fails with `auth`, the reason named. */
export class NoEndpointError extends Error {
  readonly status = 401;
  constructor(api: string) {
    super(`no endpoint is configured for ${api} (the baton command takes it from ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL)`);
    this.name = 'NoEndpointError';
  }
}

/** The Anthropic client, loaded if need be; `NoEndpointError` when the daemon has no Anthropic endpoint. */
export function anthropicOf(clients: ModelClients): LazyClient<Anthropic> {
  if (clients.anthropic === null) throw new NoEndpointError('anthropic-messages');
  return clients.anthropic;
}
