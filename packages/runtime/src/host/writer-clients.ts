import OpenAI from 'openai';
import { lazyClient, type ModelClients } from '../model/model-clients.ts';
import type { HostOptions } from './worker-messages.ts';

/** Client sets kept for agents' keys at most (the least recently used is dropped; it is made again when needed). */
const MAX_KEYED_CLIENTS = 32;

/**
 * The model clients a worker's writers and compactions call through: the daemon's configured endpoints with its own
 * keys, or, for a session whose agent's key was handed over (an embedded gateway's `--writer-key agent`), the same
 * endpoints with that key. The keys live in this worker's memory only, by session; nothing here logs or returns one.
 */
export class WriterClients {
  readonly #model: HostOptions['model'];
  readonly #anthropic: HostOptions['anthropic'];
  readonly #daemon: ModelClients;
  readonly #keys = new Map<string, string>();
  /** Clients per agent key, least recently used first. */
  readonly #byKey = new Map<string, ModelClients>();

  constructor(model: HostOptions['model'], anthropic: HostOptions['anthropic']) {
    this.#model = model;
    this.#anthropic = anthropic;
    this.#daemon = this.#make(null);
  }

  /** The key `sessionId`'s writers use from now on; null: the daemon's own again. */
  setKey(sessionId: string, key: string | null): void {
    if (key === null) this.#keys.delete(sessionId);
    else this.#keys.set(sessionId, key);
  }

  /** The agent's key `sessionId`'s model calls use now; null: the daemon's own. */
  keyOf(sessionId: string): string | null {
    return this.#keys.get(sessionId) ?? null;
  }

  /** The clients for `sessionId`'s model calls. */
  for(sessionId: string): ModelClients {
    const key = this.#keys.get(sessionId);
    if (key === undefined) return this.#daemon;
    let clients = this.#byKey.get(key);
    if (clients !== undefined) this.#byKey.delete(key);
    else clients = this.#make(key);
    this.#byKey.set(key, clients);
    if (this.#byKey.size > MAX_KEYED_CLIENTS) this.#byKey.delete(this.#byKey.keys().next().value as string);
    return clients;
  }

  #make(key: string | null): ModelClients {
    const model = this.#model;
    const anthropic = this.#anthropic;
    return {
      openai: new OpenAI({ baseURL: model.baseURL, apiKey: key ?? model.apiKey, timeout: model.timeoutMs, maxRetries: model.maxRetries }),
      anthropic:
        anthropic === null
          ? null
          : lazyClient(async () => {
              const { default: Anthropic } = await import('@anthropic-ai/sdk');
              return new Anthropic({ baseURL: anthropic.baseURL, apiKey: key ?? anthropic.apiKey, timeout: anthropic.timeoutMs, maxRetries: anthropic.maxRetries });
            }),
    };
  }
}
