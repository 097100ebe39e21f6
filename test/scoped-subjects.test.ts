import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport, type NatsAuth } from '@baton/client';
import { encodeRequest } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_TAIL, conversation } from './support/conversation.ts';

const MODEL = { id: 'gpt-4o', context_window: 128_000 };
const PASSWORDS = { BATON_DAEMON_PASS: 'daemon-pw', BATON_OPERATOR_PASS: 'operator-pw', SHOP_PASS: 'shop-pw', BILLING_PASS: 'billing-pw' };

/** The permissions recipe exactly as docs/operations.md gives it (the block after its marker). */
async function documentedPermissions(): Promise<string> {
  const doc = await readFile(join(import.meta.dirname, '..', 'docs', 'operations.md'), 'utf8');
  const block = /<!-- baton:nats-permissions -->\n```conf\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/operations.md has no nats-permissions block');
  return block;
}

interface Party {
  readonly transport: NatsTransport;
  readonly client: BatonClient;
}

async function party(url: string, auth: NatsAuth, inboxPrefix: string, project?: string): Promise<Party> {
  const transport = await NatsTransport.connect({ servers: url, auth, inboxPrefix, onHandlerError: () => {} });
  return { transport, client: new BatonClient(transport, { timeoutMs: 10_000, ...(project === undefined ? {} : { project }) }) };
}

describe('per-project permissions on one NATS server (the documented recipe)', () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  let dataDir: string;
  let log: LmdbEventLog;
  let daemon: BatonDaemon;
  let daemonTransport: NatsTransport;
  let shop: Party;
  let billing: Party;
  let operator: Party;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // nats-server reads the passwords from its environment, as the recipe says.
    for (const [k, v] of Object.entries(PASSWORDS)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
    nats = await startNatsServer({ config: await documentedPermissions() });
    model = await startLoopbackModel({ mode: 'extractive' });
    dataDir = await mkdtemp(join(tmpdir(), 'baton-scoped-'));
    log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    daemonTransport = await NatsTransport.connect({ servers: nats.url, auth: { user: 'baton-daemon', pass: PASSWORDS.BATON_DAEMON_PASS } });
    daemon = BatonDaemon.start({
      transport: daemonTransport,
      log,
      dataDir,
      poolSize: 1,
      model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
      tail: TEST_TAIL,
    });
    await daemon.ready();
    shop = await party(nats.url, { user: 'shop', pass: PASSWORDS.SHOP_PASS }, '_INBOX_shop', 'shop');
    billing = await party(nats.url, { user: 'billing', pass: PASSWORDS.BILLING_PASS }, '_INBOX_billing', 'billing');
    operator = await party(nats.url, { user: 'baton-operator', pass: PASSWORDS.BATON_OPERATOR_PASS }, '_INBOX_operator');
  }, 60_000);

  afterAll(async () => {
    for (const p of [shop, billing, operator]) await p?.transport.close();
    await daemon?.stop();
    await daemonTransport?.close();
    await log?.close();
    await model?.close();
    await nats?.stop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('lets each project work within itself, nothing of another project, and the operator see both', async () => {
    // Within its project a client opens, appends, asks for a checkpoint, follows its events and rebuilds.
    const mine = (await shop.client.open({ project_id: 'shop', model: MODEL })).session_id;
    expect((await shop.client.append(mine, conversation(4, { prefix: 'shop-' }))).accepted).toBe(16);
    const settled = shop.client.waitForEvent(mine, (e) => e.type === 'writer.settled', 30_000);
    expect((await shop.client.checkpoint(mine)).result).toBe('started');
    expect(await settled).toMatchObject({ type: 'writer.settled', outcome: 'success' });
    expect((await shop.client.rebuild(mine, { reason: 'manual', wait_ms: 0 })).outcome).toBe('rebuilt');
    expect((await shop.client.runtimeSessions()).sessions.map((s) => s.session_id)).toEqual([mine]);

    const theirs = (await billing.client.open({ project_id: 'billing', model: MODEL })).session_id;
    await billing.client.append(theirs, conversation(4, { prefix: 'billing-' }));
    const before = [...log.read(`session/${theirs}`)].length;

    // On its own subjects, another project's session is unknown, worded as an id nobody has.
    const unknown = await shop.client.status('no-such-session').catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'not_found', message: 'unknown session no-such-session' });
    for (const call of [
      () => shop.client.status(theirs),
      () => shop.client.append(theirs, conversation(1, { prefix: 'forged-' })),
      () => shop.client.rebuild(theirs, { reason: 'manual', wait_ms: 0 }),
      () => shop.client.close(theirs),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'not_found', message: `unknown session ${theirs}` });
    }
    // Resuming it by id on its own subjects: unknown too (not a conflict naming the other project).
    await expect(shop.client.open({ project_id: 'shop', session_id: theirs, model: MODEL })).rejects.toMatchObject({ code: 'not_found' });
    // NATS refuses the rest before any daemon sees it: another project's subjects, the unscoped and runtime subjects,
    // JetStream.
    const raw = (subject: string): Promise<unknown> => shop.transport.request(subject, encodeRequest({}, 'msgpack'), { timeoutMs: 2_000 });
    for (const subject of [`baton.v1.p.billing.session.${theirs}.status`, `baton.v1.session.${theirs}.status`, 'baton.v1.open', 'baton.v1.runtime.sessions', 'baton.v1.runtime.status', '$JS.API.INFO', '$JS.API.STREAM.NAMES']) {
      await expect(raw(subject), subject).rejects.toBeDefined();
    }
    // Nothing reached the other project's session.
    expect([...log.read(`session/${theirs}`)].length).toBe(before);

    // Its events do not reach the other project, even subscribed for by name.
    const leaked: string[] = [];
    const spy = shop.transport.subscribe(`baton.v1.p.billing.session.${theirs}.events`, (m) => leaked.push(m.subject));
    const unscopedSpy = shop.transport.subscribe(`baton.v1.session.${theirs}.events`, (m) => leaked.push(m.subject));
    const theirsSettled = billing.client.waitForEvent(theirs, (e) => e.type === 'writer.settled', 30_000);
    expect((await billing.client.checkpoint(theirs)).result).toBe('started');
    await theirsSettled;
    // A round trip on the spying connection: whatever the server sent it before is in by now.
    await shop.transport.flush();
    expect(leaked).toEqual([]);
    spy.unsubscribe();
    unscopedSpy.unsubscribe();

    // The operator sees both projects, on the runtime subjects and on each project's.
    const all = (await operator.client.runtimeSessions()).sessions.map((s) => s.session_id);
    expect(all).toEqual(expect.arrayContaining([mine, theirs]));
    expect((await operator.client.status(theirs)).state.tokens).toBeGreaterThanOrEqual(0);
    expect((await new BatonClient(operator.transport, { project: 'billing' }).runtimeSessions()).sessions.map((s) => s.session_id)).toEqual([theirs]);
  });

  it('answers a scoped subject whose project disagrees with the session not_found, for a client allowed to publish anywhere', async () => {
    const theirs = (await billing.client.open({ project_id: 'billing', model: MODEL })).session_id;
    const broad = new BatonClient(operator.transport, { project: 'shop' });
    await expect(broad.status(theirs)).rejects.toMatchObject({ code: 'not_found', message: `unknown session ${theirs}` });
    await expect(broad.append(theirs, conversation(1, { prefix: 'x-' }))).rejects.toMatchObject({ code: 'not_found' });
    // An `open` on one project's subjects that names another project is refused and opens nothing.
    const forged = await operator.client
      .requestRaw('baton.v1.p.shop.open', encodeRequest({ project_id: 'billing', model: MODEL, session_id: 'forged-open' }, 'msgpack'))
      .then((r) => r.data);
    expect(new TextDecoder().decode(forged)).toContain('bad_request');
    expect([...log.read('session/forged-open')]).toEqual([]);
    // The same session on its own project's subjects is served.
    expect((await new BatonClient(operator.transport, { project: 'billing' }).status(theirs)).ok).toBe(true);
  });
});

describe('a daemon serving the scoped subjects only (requireScopedSubjects)', () => {
  it('leaves the unscoped open and session subjects unanswered, publishes events on the scoped ones alone, and keeps the runtime subjects', async () => {
    const nats = await startNatsServer();
    const model = await startLoopbackModel({ mode: 'extractive' });
    const dataDir = await mkdtemp(join(tmpdir(), 'baton-scoped-only-'));
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    const daemonTransport = await NatsTransport.connect({ servers: nats.url });
    const daemon = BatonDaemon.start({
      transport: daemonTransport,
      log,
      dataDir,
      poolSize: 1,
      model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
      tail: TEST_TAIL,
      requireScopedSubjects: true,
    });
    const transport = await NatsTransport.connect({ servers: nats.url });
    try {
      await daemon.ready();
      const client = new BatonClient(transport, { timeoutMs: 10_000 });
      const sid = (await client.open({ project_id: 'shop', model: MODEL })).session_id;
      await client.append(sid, conversation(4));
      const body = encodeRequest({}, 'msgpack');
      await expect(transport.request(`baton.v1.session.${sid}.status`, body, { timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'no_responders' });
      await expect(transport.request('baton.v1.open', encodeRequest({ project_id: 'shop', model: MODEL }, 'msgpack'), { timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'no_responders' });
      // A project id that cannot scope subjects has no way in: its open goes on the unscoped subject.
      await expect(client.open({ project_id: 'a/path', model: MODEL })).rejects.toMatchObject({ code: 'no_responders' });
      const unscoped: string[] = [];
      const spy = transport.subscribe(`baton.v1.session.${sid}.events`, (m) => unscoped.push(m.subject));
      const settled = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
      expect((await client.checkpoint(sid)).result).toBe('started');
      await settled;
      await transport.flush();
      expect(unscoped).toEqual([]);
      spy.unsubscribe();
      expect((await client.runtimeStatus()).ok).toBe(true);
      expect((await client.runtimeSessions()).sessions.map((s) => s.session_id)).toEqual([sid]);
    } finally {
      await transport.close();
      await daemon.stop();
      await daemonTransport.close();
      await log.close();
      await model.close();
      await nats.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
