import { parseRoute, type Route } from './route.ts';

/**
 * The provider API paths the gateway forwards (after an optional `/v1`): each one exactly, or a path below it
 * (`/responses/<id>`, `/messages/count_tokens`, `/models/<id>`).
 */
const API_PATHS = ['/chat/completions', '/completions', '/responses', '/messages', '/models', '/embeddings', '/moderations'];

/** A request target the gateway will not forward, and what the agent is told. */
export interface TargetRefusal {
  readonly status: 400 | 404;
  readonly code: 'invalid_request_target' | 'unknown_path' | 'invalid_session_name' | 'invalid_handoff_token';
  readonly message: string;
}

/** Whether `path` is `prefix` or below it (segment by segment: `/v1/files` does not cover `/v1/filesystem`). */
function under(path: string, prefix: string): boolean {
  const p = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  return path === p || path.startsWith(`${p}/`) || p === '';
}

/** Whether an upstream path (query left out) is one of the API paths, with or without `/v1`, or under a passthrough prefix. */
export function isForwardable(endpoint: string, passthrough: readonly string[]): boolean {
  const rest = endpoint.startsWith('/v1/') ? endpoint.slice(3) : endpoint;
  return API_PATHS.some((p) => under(rest, p)) || passthrough.some((p) => under(endpoint, p));
}

/**
 * Checks a passthrough prefix given in the options: an origin-form path of plain segments (`/v1/files`).
 * Throws with the reason otherwise.
 */
export function checkPassthroughPrefix(prefix: string): string {
  if (!prefix.startsWith('/') || shapeProblem(prefix) !== null || prefix.includes('?')) throw new Error(`passthrough prefix ${JSON.stringify(prefix)} is not a plain path like /v1/files`);
  return prefix;
}

/** What is wrong with the shape of a request path (null: nothing). */
function shapeProblem(path: string): string | null {
  if (!path.startsWith('/')) return 'the request target must be a path (absolute-form and authority-form targets are not forwarded)';
  if (path.includes('//')) return 'the path has an empty segment (//)';
  if (path.includes('\\')) return 'the path has a backslash';
  if (/%(2f|5c)/i.test(path)) return 'the path has an encoded slash';
  // A dot segment, also percent-encoded: `.`, `..`, `%2e`, `.%2E`, …
  const segments = path.split('/').map((s) => s.replace(/%2e/gi, '.'));
  if (segments.some((s) => s === '.' || s === '..')) return 'the path has a dot segment';
  if (/%(?![0-9a-f]{2})/i.test(path)) return 'the path has a malformed percent-encoding';
  return null;
}

/**
 * Reads an agent's request target: its session prefix and its upstream path, when the gateway forwards it. Refused:
 * any target that is not a plain origin-form path (absolute-form, `//`, dot segments, encoded slashes or backslashes:
 * 400), a `/s/<name>/` prefix whose name is not a session name, and a path that is none of the provider API paths nor
 * under a `passthrough` prefix (404). The upstream request is then always the upstream's origin and base path
 * followed by that path.
 */
export function readRequestTarget(target: string, passthrough: readonly string[]): { route: Route } | { refusal: TargetRefusal } {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const problem = shapeProblem(path);
  if (problem !== null) return { refusal: { status: 400, code: 'invalid_request_target', message: `${problem}: the gateway forwards provider API paths only` } };
  const route = parseRoute(target);
  if (route.sessionId === null && /^\/s\/[^/]*\//.test(path)) {
    return {
      refusal: {
        status: 404,
        code: 'invalid_session_name',
        message: 'Baton: a session name in /s/<name>/ has 1 to 100 of A-Z a-z 0-9 _ - (e.g. http://127.0.0.1:8787/s/my-task/v1)',
      },
    };
  }
  // A handoff base URL whose token has not a token's shape: refused before anything is read (nothing is looked up).
  if (route.handoff === null && /^\/h\/[^/]*\//.test(path)) {
    return { refusal: { status: 404, code: 'invalid_handoff_token', message: 'Baton: unknown handoff token (a handoff base URL is http://host:port/h/bh_<43 characters>/v1, from `baton handoff`)' } };
  }
  if (!isForwardable(route.endpoint, passthrough)) {
    return {
      refusal: {
        status: 404,
        code: 'unknown_path',
        message: `Baton: ${route.endpoint} is not a provider API path the gateway forwards (chat/completions, responses, messages, models, embeddings, …); start it with --passthrough <path-prefix> to forward others`,
      },
    };
  }
  return { route };
}
