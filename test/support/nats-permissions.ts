import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NatsAuth } from '@baton/client';

/** The passwords the recipe reads from nats-server's environment. */
export const PASSWORDS = { BATON_DAEMON_PASS: 'daemon-pw', BATON_OPERATOR_PASS: 'operator-pw', SHOP_PASS: 'shop-pw', BILLING_PASS: 'billing-pw' } as const;

export const DAEMON_AUTH: NatsAuth = { user: 'baton-daemon', pass: PASSWORDS.BATON_DAEMON_PASS };
export const OPERATOR_AUTH: NatsAuth = { user: 'baton-operator', pass: PASSWORDS.BATON_OPERATOR_PASS };

/** The recipe's projects: their NATS user and reply inbox prefix. */
export const PROJECT_USERS = {
  shop: { auth: { user: 'shop', pass: PASSWORDS.SHOP_PASS }, inboxPrefix: '_INBOX_shop' },
  billing: { auth: { user: 'billing', pass: PASSWORDS.BILLING_PASS }, inboxPrefix: '_INBOX_billing' },
} as const satisfies Record<string, { auth: NatsAuth; inboxPrefix: string }>;

/** The permissions recipe exactly as docs/operations.md gives it (the block after its marker). */
export async function documentedPermissions(): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
  const block = /<!-- baton:nats-permissions -->\n```conf\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/operations.md has no nats-permissions block');
  return block;
}

/**
 * Sets the recipe's passwords in this process's environment, where the nats-server children started next read them;
 * returns the undo.
 */
export function withPasswords(): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(PASSWORDS)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
