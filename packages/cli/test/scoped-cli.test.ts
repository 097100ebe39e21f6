import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { startLoopbackModel, startNatsServer } from '@baton/testing';
import { describe, expect, it } from 'vitest';
import { DAEMON_AUTH, PASSWORDS, PROJECT_USERS, documentedAccounts, documentedPermissions, withNkeys, withPasswords } from '../../../test/support/nats-permissions.ts';
import { startClusterMember, stopClusterMembers } from '../../../test/support/cluster-member.ts';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';

const MODEL = { id: 'gpt-4o', context_window: 100_000 };

/*
 * The CLI with a project's NATS credentials against a server running docs/operations.md's permission recipe:
 * `baton sessions --project` lists that project's sessions through its own subject and reply inboxes; the runtime
 * subjects are not that user's to ask.
 */
describe("baton sessions with a project's NATS user", () => {
  it('lists its project on its own subject, and is refused the runtime list', { timeout: 60_000 }, async () => {
    const restore = withPasswords();
    const nats = await startNatsServer({ config: await documentedPermissions() });
    restore();
    const model = await startLoopbackModel({ mode: 'extractive' });
    const member = await startClusterMember(nats.url, model, { cluster: false, auth: DAEMON_AUTH });
    const shopTransport = await NatsTransport.connect({ servers: nats.url, auth: PROJECT_USERS.shop.auth, inboxPrefix: PROJECT_USERS.shop.inboxPrefix });
    const billingTransport = await NatsTransport.connect({ servers: nats.url, auth: PROJECT_USERS.billing.auth, inboxPrefix: PROJECT_USERS.billing.inboxPrefix });
    try {
      const mine = (await new BatonClient(shopTransport).open({ project_id: 'shop', model: MODEL })).session_id;
      const theirs = (await new BatonClient(billingTransport).open({ project_id: 'billing', model: MODEL })).session_id;
      const env = { BATON_NATS_PASSWORD: PASSWORDS.SHOP_PASS };
      const flags = ['--nats', nats.url, '--nats-user', 'shop', '--nats-inbox-prefix', PROJECT_USERS.shop.inboxPrefix, '--timeout', '5000'];

      const listed = captureIo();
      expect(await main(['node', 'baton', 'sessions', ...flags, '--project', 'shop', '--json'], listed, env)).toBe(0);
      const ids = (JSON.parse(listed.stdout.join('\n')) as { sessions: { session_id: string }[] }).sessions.map((s) => s.session_id);
      expect(ids).toEqual([mine]);
      expect(ids).not.toContain(theirs);

      const refused = captureIo();
      expect(await main(['node', 'baton', 'sessions', ...flags, '--json'], refused, env)).not.toBe(0);
      expect(refused.stderr.join('\n')).toMatch(/baton sessions: NATS permissions refuse baton.v1.runtime.sessions/);

      const badProject = captureIo();
      expect(await main(['node', 'baton', 'sessions', ...flags, '--project', 'a.b'], badProject, env)).not.toBe(0);
      expect(badProject.stderr.join('\n')).toMatch(/project id/);
    } finally {
      await shopTransport.close();
      await billingTransport.close();
      await stopClusterMembers([member]);
      await model.close();
      await nats.stop();
    }
  });

  it('signs in with an NKey seed file (--nats-nkey) under the accounts recipe, and refuses a file that holds no seed', { timeout: 60_000 }, async () => {
    const { seeds, restore } = withNkeys();
    const nats = await startNatsServer({ config: await documentedAccounts() });
    restore();
    const model = await startLoopbackModel({ mode: 'extractive' });
    const member = await startClusterMember(nats.url, model, { cluster: false, auth: { nkeySeed: seeds.daemon } });
    const shopTransport = await NatsTransport.connect({ servers: nats.url, auth: { nkeySeed: seeds.shop } });
    try {
      const mine = (await new BatonClient(shopTransport).open({ project_id: 'shop', model: MODEL })).session_id;
      const seedFile = join(member.dataDir, 'shop.nk');
      writeFileSync(seedFile, `${seeds.shop}\n`, { mode: 0o600 });
      const listed = captureIo();
      expect(await main(['node', 'baton', 'sessions', '--nats', nats.url, '--nats-nkey', seedFile, '--project', 'shop', '--json', '--timeout', '5000'], listed, {})).toBe(0);
      expect((JSON.parse(listed.stdout.join('\n')) as { sessions: { session_id: string }[] }).sessions.map((x) => x.session_id)).toEqual([mine]);
      const notSeed = join(member.dataDir, 'not-a-seed');
      writeFileSync(notSeed, 'hello\n');
      const bad = captureIo();
      expect(await main(['node', 'baton', 'sessions', '--nats', nats.url, '--nats-nkey', notSeed, '--project', 'shop'], bad, {})).toBe(1);
      expect(bad.stderr.join('\n')).toMatch(/--nats-nkey: .* does not hold an NKey user seed/);
    } finally {
      await shopTransport.close();
      await stopClusterMembers([member]);
      await model.close();
      await nats.stop();
    }
  });
});
