import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AgentRequest } from './agent-request.ts';

/** Headers agents send that name their session (Codex `session-id`, pi `session_id`, Claude Code's own). */
const SESSION_HEADERS = ['x-baton-session', 'session-id', 'session_id', 'x-session-id', 'x-claude-code-session-id'];

const SAFE = /^[A-Za-z0-9_-]{1,100}$/;

/** A session id usable as a daemon session id: kept when safe, else a digest of it. */
function safeId(prefix: string, value: string): string {
  return SAFE.test(value) ? value : `${prefix}${createHash('sha256').update(value).digest('base64url').slice(0, 22)}`;
}

/** The session a request names before its body is read: the `/s/<sid>/` path prefix, else a session header. */
export function namedSessionOf(pathSession: string | null, headers: IncomingHttpHeaders): string | null {
  if (pathSession !== null) return pathSession;
  for (const name of SESSION_HEADERS) {
    const value = headers[name];
    const text = Array.isArray(value) ? value[0] : value;
    if (text !== undefined && text !== '') return safeId('h-', text);
  }
  return null;
}

/**
 * Which session a request belongs to: the `/s/<sid>/` path prefix; else a session header the agent sends; else the
 * Responses `prompt_cache_key` (agents set it to their session id); else a fingerprint of its credential (a digest,
 * `owner`), system prompt and first user message (the same conversation gives the same fingerprint, request after
 * request, since histories only grow). The credential keeps apart the conversations of different users that open the
 * same way (one agent's system prompt, a first "hi").
 */
export function sessionKeyOf(pathSession: string | null, headers: IncomingHttpHeaders, req: AgentRequest, owner: string): string {
  const named = namedSessionOf(pathSession, headers);
  if (named !== null) return named;
  const cacheKey = req.body['prompt_cache_key'];
  if (typeof cacheKey === 'string' && cacheKey !== '') return safeId('k-', cacheKey);
  const first = req.history.find((m) => m['role'] === 'user');
  const system = req.api === 'openai-chat' ? req.system : [req.system, req.body['system'] ?? null, req.body['instructions'] ?? null];
  const digest = createHash('sha256').update(JSON.stringify([owner, system, first ?? null])).digest('base64url').slice(0, 22);
  return `f-${digest}`;
}
