import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { UpstreamCall } from './upstream-call.ts';

/**
 * Headers that belong to one connection, not to the request: never forwarded in either direction. `expect:
 * 100-continue` (curl sends it with a large body) was answered by the gateway's own server already, and undici refuses
 * a request that carries it.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host', 'content-length', 'expect']);

/** The agent's request headers as the upstream gets them (its own auth header included). */
export function upstreamHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  return out;
}

/**
 * The upstream's response headers as the agent gets them; `keepLength` keeps its `content-length`, for a body relayed
 * byte for byte.
 */
export function downstreamHeaders(headers: Dispatcher.ResponseData['headers'], options: { keepLength?: boolean } = {}): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) || (options.keepLength === true && lower === 'content-length')) out[name] = value;
  }
  return out;
}

/**
 * The upstream provider: one undici connection pool (keep-alive) to its base URL. undici is Node's own HTTP client:
 * it streams bodies both ways without buffering, which is what relaying SSE chunk by chunk needs; calls go through its
 * dispatcher's callbacks (`UpstreamCall`), the leanest way it has to hand a reply on.
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
    // Only ever below the base: an origin-form path is appended to the base's origin and path as text (never resolved
    // against it, which would let `//host/…` or `http://host/…` name another host).
    if (!path.startsWith('/') || path.startsWith('//')) throw new Error('the upstream path must be an origin-form path');
    const basePath = this.base.pathname.replace(/\/$/, '');
    const rest = basePath.endsWith('/v1') && path.startsWith('/v1/') ? path.slice(3) : path;
    const url = new URL(`${this.base.origin}${basePath}${rest}`);
    if (url.origin !== this.base.origin) throw new Error('the upstream path must stay on the upstream');
    return url;
  }

  /** Sends a request; its reply comes through the returned call (`started`, then `consume`). */
  call(method: string, path: string, headers: Record<string, string | string[]>, body: Uint8Array | null): UpstreamCall {
    const url = this.url(path);
    const call = new UpstreamCall();
    this.#agent.dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body }, call);
    return call;
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
