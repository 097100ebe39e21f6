import type { IncomingHttpHeaders } from 'node:http';

/**
 * The API key a call carries: Anthropic's `x-api-key`, else the token of an `Authorization: Bearer` header; null when
 * it carries neither (or several).
 */
export function agentKeyOf(headers: IncomingHttpHeaders): string | null {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return bearer?.[1] ?? null;
}
