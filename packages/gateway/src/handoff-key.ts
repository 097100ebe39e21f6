import { createHash } from 'node:crypto';

/**
 * The key the gateway follows a handoff base URL's conversation under: a digest of its token, so no log line, metric
 * or map key ever carries the token itself (the daemon names the session the token opens).
 */
export function handoffKey(token: string): string {
  return `ho-${createHash('sha256').update(`gateway:${token}`).digest('base64url').slice(0, 22)}`;
}
