import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NatsAuth } from '@baton/client';
import { nkeys } from '@nats-io/nats-core';

/** The passwords the recipe reads from nats-server's environment. */
export const PASSWORDS = { BATON_DAEMON_PASS: 'daemon-pw', BATON_OPERATOR_PASS: 'operator-pw', SHOP_PASS: 'shop-pw', BILLING_PASS: 'billing-pw' } as const;

export const DAEMON_AUTH: NatsAuth = { user: 'baton-daemon', pass: PASSWORDS.BATON_DAEMON_PASS };
export const OPERATOR_AUTH: NatsAuth = { user: 'baton-operator', pass: PASSWORDS.BATON_OPERATOR_PASS };

/** The recipe's projects: their NATS user and reply inbox prefix. */
export const PROJECT_USERS = {
  shop: { auth: { user: 'shop', pass: PASSWORDS.SHOP_PASS }, inboxPrefix: '_INBOX_shop' },
  billing: { auth: { user: 'billing', pass: PASSWORDS.BILLING_PASS }, inboxPrefix: '_INBOX_billing' },
} as const satisfies Record<string, { auth: NatsAuth; inboxPrefix: string }>;

/** A configuration block exactly as docs/operations.md gives it (the block after its marker). */
async function documentedBlock(marker: string): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
  const block = new RegExp(`<!-- baton:${marker} -->\\n\`\`\`conf\\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
  if (block === undefined) throw new Error(`docs/operations.md has no ${marker} block`);
  return block;
}

/** The permissions recipe (users and passwords in one account). */
export function documentedPermissions(): Promise<string> {
  return documentedBlock('nats-permissions');
}

/** The accounts recipe (an account per project, users known by their NKeys). */
export function documentedAccounts(): Promise<string> {
  return documentedBlock('nats-accounts');
}

/** NKey users for the accounts recipe: their seeds, and the public keys set in the environment nats-server reads. */
export function withNkeys(): { seeds: Record<'daemon' | 'operator' | 'shop' | 'billing', string>; restore: () => void } {
  const made = { daemon: nkeys.createUser(), operator: nkeys.createUser(), shop: nkeys.createUser(), billing: nkeys.createUser() };
  const vars = { BATON_DAEMON_NKEY: made.daemon, BATON_OPERATOR_NKEY: made.operator, SHOP_NKEY: made.shop, BILLING_NKEY: made.billing };
  const saved: Record<string, string | undefined> = {};
  for (const [k, pair] of Object.entries(vars)) {
    saved[k] = process.env[k];
    process.env[k] = pair.getPublicKey();
  }
  const seed = (pair: (typeof made)['daemon']): string => new TextDecoder().decode(pair.getSeed());
  return {
    seeds: { daemon: seed(made.daemon), operator: seed(made.operator), shop: seed(made.shop), billing: seed(made.billing) },
    restore: () => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    },
  };
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
