/** Addresses a server listens on when only this machine may reach it. */
const LOOPBACK_BINDS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Host names of this machine's loopback, as a `Host` or `Origin` header spells them. */
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The `Host` values a loopback-bound Baton HTTP server (the inspector, the gateway) answers: its own port under a
 * loopback name. Null (no check) when it listens beyond loopback, where the operator chose who may reach it.
 */
export function loopbackHosts(bind: string, port: number): ReadonlySet<string> | null {
  if (!LOOPBACK_BINDS.has(bind)) return null;
  return new Set([...LOOPBACK_NAMES].map((name) => `${name}:${port}`));
}

/**
 * Why a request to a loopback-bound server is refused, or null when it is not. A `Host` that is not one of `hosts` is
 * a page elsewhere reaching the server through a name that resolves to this machine (DNS rebinding); an `Origin` that
 * is not on loopback is a page of another site posting to it from a browser on this machine (which a server that
 * needs no key, or a local model behind it, would otherwise answer). Clients that are not browsers send no `Origin`.
 */
export function loopbackRefusal(hosts: ReadonlySet<string> | null, headers: { readonly host?: string | undefined; readonly origin?: string | string[] | undefined }): string | null {
  if (hosts === null) return null;
  const host = (headers.host ?? '').toLowerCase();
  if (!hosts.has(host)) return `this server answers only on loopback (${[...hosts].join(', ')}), not as ${headers.host ?? 'no host'}`;
  const origin = Array.isArray(headers.origin) ? headers.origin[0] : headers.origin;
  if (origin !== undefined && !isLoopbackOrigin(origin)) return `this server answers no page of another site (origin ${origin})`;
  return null;
}

/** Whether an `Origin` header names a page served from this machine's loopback (any port). */
function isLoopbackOrigin(origin: string): boolean {
  const match = /^https?:\/\/([^/]+?)(:\d+)?$/i.exec(origin.trim());
  return match !== null && LOOPBACK_NAMES.has((match[1] ?? '').toLowerCase());
}
