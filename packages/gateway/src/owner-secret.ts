import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { agentKeyOf } from './agent-key.ts';

/** The file in a data directory that holds the gateway's ownership secret (created at first start, mode 0600). */
export const OWNER_SECRET_FILE = 'gateway-owner.secret';

/**
 * The secret session owners are digested under, from `<dir>/gateway-owner.secret`: 32 random bytes (hex), written
 * there with mode 0600 the first time (a file another process created meanwhile is read instead). A file others may
 * read is made owner-only. Every gateway that records into the same sessions, and `baton rebind`, needs the same one.
 */
export function loadOwnerSecret(dir: string): Buffer {
  const path = join(dir, OWNER_SECRET_FILE);
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`${path} does not hold a gateway ownership secret (64 hex digits)`);
  return Buffer.from(text, 'hex');
}

/**
 * The credential a request carries, as sessions are bound to it: its API key (`x-api-key`, or the token of a Bearer
 * `authorization`, so the same key binds the same way in either header), else the raw header, else nothing ('').
 */
export function credentialOf(headers: IncomingHttpHeaders): string {
  const key = agentKeyOf(headers);
  if (key !== null) return key;
  const value = headers.authorization ?? headers['x-api-key'];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

/** The owner digest of a credential: HMAC-SHA256 under the secret (never the credential itself). */
export function ownerDigest(secret: Uint8Array, credential: string): string {
  return `hmac-sha256:${createHmac('sha256', secret).update(credential, 'utf8').digest('base64url')}`;
}
