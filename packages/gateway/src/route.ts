/** What a request path says: the session it names (`/s/<sid>/…`), and the API path after it. */
export interface Route {
  /** From a `/s/<sid>` prefix; null when the path has none. */
  readonly sessionId: string | null;
  /** The path the upstream sees, with the session prefix removed (query kept), e.g. `/v1/chat/completions`. */
  readonly upstreamPath: string;
  /** The API endpoint, without a query string. */
  readonly endpoint: string;
}

const SESSION_PREFIX = /^\/s\/([A-Za-z0-9_-]{1,100})(?=\/)/;

/**
 * Splits a request path into the session prefix and the upstream path. A prefix that is not a valid session id is not
 * a prefix (the path is forwarded as it is).
 */
export function parseRoute(path: string): Route {
  const match = SESSION_PREFIX.exec(path);
  const upstreamPath = match === null ? path : path.slice(match[0].length);
  const q = upstreamPath.indexOf('?');
  return { sessionId: match?.[1] ?? null, upstreamPath, endpoint: q < 0 ? upstreamPath : upstreamPath.slice(0, q) };
}

/** Chat-completions endpoints (with or without a `/v1` base path). */
export function isChatCompletions(endpoint: string): boolean {
  return endpoint === '/v1/chat/completions' || endpoint === '/chat/completions';
}

/** Anthropic Messages endpoints: `/v1/messages` and what is under it (`count_tokens`, batches), with or without `/v1`. */
export function isAnthropicMessages(endpoint: string): boolean {
  return /^(\/v1)?\/messages(\/|$)/.test(endpoint);
}
