/** What a request path says: the session it names (`/s/<sid>/…`), and the API path after it. */
export interface Route {
  /** From a `/s/<sid>` prefix; null when the path has none. */
  readonly sessionId: string | null;
  /** From a `/h/<token>` prefix (a handoff base URL): the token, checked for its shape only; null when none. */
  readonly handoff: string | null;
  /** The path the upstream sees, with the session prefix removed (query kept), e.g. `/v1/chat/completions`. */
  readonly upstreamPath: string;
  /** The API endpoint, without a query string. */
  readonly endpoint: string;
}

const SESSION_PREFIX = /^\/s\/([A-Za-z0-9_-]{1,100})(?=\/)/;
/** A handoff token: `bh_` and 43 base64url characters (the protocol's `HANDOFF_TOKEN_PATTERN`). */
const HANDOFF_PREFIX = /^\/h\/(bh_[A-Za-z0-9_-]{43})(?=\/)/;

/**
 * Splits a request path into the session prefix and the upstream path. A prefix that is not a valid session id is not
 * a prefix (the path is forwarded as it is).
 */
export function parseRoute(path: string): Route {
  const handoff = HANDOFF_PREFIX.exec(path);
  const match = handoff === null ? SESSION_PREFIX.exec(path) : null;
  const prefix = handoff ?? match;
  const upstreamPath = prefix === null ? path : path.slice(prefix[0].length);
  const q = upstreamPath.indexOf('?');
  return { sessionId: match?.[1] ?? null, handoff: handoff?.[1] ?? null, upstreamPath, endpoint: q < 0 ? upstreamPath : upstreamPath.slice(0, q) };
}

/** Chat-completions endpoints (with or without a `/v1` base path). */
export function isChatCompletions(endpoint: string): boolean {
  return endpoint === '/v1/chat/completions' || endpoint === '/chat/completions';
}

/** Anthropic Messages endpoints: `/v1/messages` and what is under it (`count_tokens`, batches), with or without `/v1`. */
export function isAnthropicMessages(endpoint: string): boolean {
  return /^(\/v1)?\/messages(\/|$)/.test(endpoint);
}
