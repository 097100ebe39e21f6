import type { IncomingHttpHeaders } from 'node:http';
import { Agent, request, type Dispatcher } from 'undici';

/** Headers that belong to one connection, not to the request: never forwarded in either direction. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length']);

/** The agent's request headers as the upstream gets them (its own auth header included). */
export function upstreamHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  return out;
}

/** The upstream's response headers as the agent gets them. */
export function downstreamHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  return out;
}

/**
 * The upstream provider: one undici connection pool (keep-alive) to its base URL. undici is Node's own HTTP client:
 * it streams bodies both ways without buffering, which is what relaying SSE chunk by chunk needs.
 */
export class Upstream {
  readonly base: URL;
  readonly #agent: Agent;

  constructor(baseUrl: string, options: { timeoutMs: number }) {
    this.base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    this.#agent = new Agent({ headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, keepAliveTimeout: 30_000 });
  }

  /**
   * The upstream URL for an agent's API path. `path` includes the agent's `/v1`; a base URL that already ends in
   * `/v1` is not doubled (`https://api.example.com/v1` + `/v1/chat/completions`).
   */
  url(path: string): URL {
    const basePath = this.base.pathname.replace(/\/$/, '');
    const rest = basePath.endsWith('/v1') && path.startsWith('/v1/') ? path.slice(3) : path;
    return new URL(`${basePath}${rest}`, this.base);
  }

  send(method: string, path: string, headers: Record<string, string | string[]>, body: Uint8Array | null, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return request(this.url(path), { method: method, headers, body, signal, dispatcher: this.#agent });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
