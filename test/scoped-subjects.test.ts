import { BatonClient, NatsTransport, type NatsAuth } from '@baton/client';
import { decodeReply, encodeRequest } from '@baton/protocol';
import type { LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel, startNatsCluster, startNatsServer } from '@baton/testing';
import { describe, expect, it } from 'vitest';
import { startClusterMember, stopClusterMembers, type ClusterMember } from './support/cluster-member.ts';
import { conversation } from './support/conversation.ts';
import { DAEMON_AUTH, OPERATOR_AUTH, PROJECT_USERS, documentedAccounts, documentedPermissions, withNkeys, withPasswords } from './support/nats-permissions.ts';

const MODEL = { id: 'gpt-4o', context_window: 128_000 };
interface Party {
  readonly transport: NatsTransport;
  readonly client: BatonClient;
}

async function party(url: string, auth: NatsAuth, inboxPrefix: string, project?: string): Promise<Party> {
  const transport = await NatsTransport.connect({ servers: url, auth, inboxPrefix, onHandlerError: () => {} });
  return { transport, client: new BatonClient(transport, { timeoutMs: 10_000, ...(project === undefined ? {} : { project }) }) };
}

/** What a scenario needs: the three parties, and how many records a session has in any daemon's log. */
interface Env {
  readonly shop: Party;
  readonly billing: Party;
  readonly operator: Party;
  readonly records: (sessionId: string) => number;
  /** What a request for an id no session has gets. */
  readonly unknownCode: 'not_found' | 'no_responders';
  /** Daemons serving (each lists its own sessions). */
  readonly daemons: number;
}

/** The session ids every daemon lists on a sessions subject (each daemon answers with its own). */
async function listed(p: Party, subject: string, daemons: number): Promise<string[]> {
  const replies = await p.transport.connection.requestMany(subject, encodeRequest({}, 'msgpack'), { strategy: 'count', maxMessages: daemons, maxWait: 10_000 });
  const ids: string[] = [];
  for await (const reply of replies) {
    const body = decodeReply(reply.data, 'msgpack') as { ok: boolean; sessions?: { session_id: string }[] };
    expect(body.ok, subject).toBe(true);
    ids.push(...(body.sessions ?? []).map((x) => x.session_id));
  }
  return ids;
}

/** Each project works within itself, reaches nothing of another project, and the operator sees both. */
async function projectsStayApart({ shop, billing, operator, records, unknownCode, daemons }: Env): Promise<void> {
  // Within its project a client opens, appends, asks for a checkpoint, follows its events and rebuilds.
  const mine = (await shop.client.open({ project_id: 'shop', model: MODEL })).session_id;
  expect((await shop.client.append(mine, conversation(4, { prefix: 'shop-' }))).accepted).toBe(16);
  const settled = shop.client.waitForEvent(mine, (e) => e.type === 'writer.settled', 30_000);
  expect((await shop.client.checkpoint(mine)).result).toBe('started');
  expect(await settled).toMatchObject({ type: 'writer.settled', outcome: 'success' });
  expect((await shop.client.rebuild(mine, { reason: 'manual', wait_ms: 0 })).outcome).toBe('rebuilt');
  expect(await listed(shop, 'baton.v1.p.shop.sessions', daemons)).toContain(mine);

  const theirs = (await billing.client.open({ project_id: 'billing', model: MODEL })).session_id;
  await billing.client.append(theirs, conversation(4, { prefix: 'billing-' }));
  expect(await listed(shop, 'baton.v1.p.shop.sessions', daemons)).not.toContain(theirs);
  const before = records(theirs);

  // On its own subjects, another project's session is unknown: the answer is the one an id nobody has gets (one
  // daemon: `not_found`, "unknown session <id>"; a cluster, where only a session's holder subscribes to it: no
  // responders).
  const unknown = await shop.client.status('no-such-session').catch((e: unknown) => e);
  expect(unknown).toMatchObject({ code: unknownCode });
  const likeUnknown = async (call: Promise<unknown>): Promise<void> => {
    const err = await call.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err?.constructor).toBe(unknown?.constructor);
    expect(err).toMatchObject({ code: unknownCode, ...(unknownCode === 'not_found' ? { message: `unknown session ${theirs}` } : {}) });
  };
  await likeUnknown(shop.client.status(theirs));
  await likeUnknown(shop.client.append(theirs, conversation(1, { prefix: 'forged-' })));
  await likeUnknown(shop.client.rebuild(theirs, { reason: 'manual', wait_ms: 0 }));
  await likeUnknown(shop.client.close(theirs));
  // Resuming it by id on its own subjects: unknown too (not a conflict naming the other project).
  await expect(shop.client.open({ project_id: 'shop', session_id: theirs, model: MODEL })).rejects.toMatchObject({ code: 'not_found' });
  // NATS refuses the rest before any daemon sees it: another project's subjects, the unscoped and runtime subjects,
  // JetStream and the cluster's bucket.
  const raw = (subject: string): Promise<unknown> => shop.transport.request(subject, encodeRequest({}, 'msgpack'), { timeoutMs: 2_000 });
  for (const subject of [
    `baton.v1.p.billing.session.${theirs}.status`,
    `baton.v1.session.${theirs}.status`,
    'baton.v1.open',
    'baton.v1.runtime.sessions',
    'baton.v1.runtime.status',
  ]) {
    await expect(raw(subject), subject).rejects.toBeDefined();
  }
  // JetStream (the cluster's log and bucket): refused, or, in an account of the project's own, answered by a JetStream
  // that has nothing of Baton's (not enabled there).
  for (const subject of ['$JS.API.INFO', '$JS.API.STREAM.NAMES', '$JS.API.STREAM.INFO.KV_baton_cluster']) {
    const answer = await raw(subject).then(
      (reply) => JSON.parse(new TextDecoder().decode((reply as { data: Uint8Array }).data)) as { error?: { code: number } },
      () => ({ error: { code: -1 } }),
    );
    expect(answer.error, subject).toBeDefined();
  }
  // Nothing reached the other project's session.
  expect(records(theirs)).toBe(before);

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
  const all = await listed(operator, 'baton.v1.runtime.sessions', daemons);
  expect(all).toEqual(expect.arrayContaining([mine, theirs]));
  expect((await operator.client.status(theirs)).state.tokens).toBeGreaterThanOrEqual(0);
  expect(await listed(operator, 'baton.v1.p.billing.sessions', daemons)).toContain(theirs);

  // A client allowed to publish anywhere still gets `not_found` for a project's subject naming another's session.
  await billing.client.status(theirs);
  const settledCount = records(theirs);
  const broad = new BatonClient(operator.transport, { project: 'shop' });
  await likeUnknown(broad.status(theirs));
  await likeUnknown(broad.append(theirs, conversation(1, { prefix: 'x-' })));
  // An `open` on one project's subjects that names another project is refused and opens nothing.
  const forged = await operator.client.requestRaw('baton.v1.p.shop.open', encodeRequest({ project_id: 'billing', model: MODEL, session_id: 'forged-open' }, 'msgpack'));
  expect(new TextDecoder().decode(forged.data)).toContain('bad_request');
  expect(records('forged-open')).toBe(0);
  expect(records(theirs)).toBe(settledCount);
}

async function parties(url: string): Promise<Omit<Env, 'records' | 'unknownCode' | 'daemons'>> {
  return {
    shop: await party(url, PROJECT_USERS.shop.auth, PROJECT_USERS.shop.inboxPrefix, 'shop'),
    billing: await party(url, PROJECT_USERS.billing.auth, PROJECT_USERS.billing.inboxPrefix, 'billing'),
    operator: await party(url, OPERATOR_AUTH, '_INBOX_operator'),
  };
}

/**
 * The records of a session that requests made, in any daemon's log (a session's decisions are written a little after
 * the inputs they follow, so they are left out of the count).
 */
const countRecords = (logs: readonly LmdbEventLog[]) => (sessionId: string): number =>
  logs.reduce((n, log) => n + [...log.read(`session/${sessionId}`)].filter((r) => r.type !== 'decision').length, 0);

describe('per-project permissions (the documented recipe)', () => {
  it('on one NATS server: each project works within itself, reaches nothing of another, the operator sees both', { timeout: 120_000 }, async () => {
    const restore = withPasswords();
    const nats = await startNatsServer({ config: await documentedPermissions() });
    restore();
    const model = await startLoopbackModel({ mode: 'extractive' });
    const members: ClusterMember[] = [];
    try {
      members.push(await startClusterMember(nats.url, model, { cluster: false, auth: DAEMON_AUTH }));
      const env = await parties(nats.url);
      try {
        await projectsStayApart({ ...env, records: countRecords(members.map((m) => m.log)), unknownCode: 'not_found', daemons: 1 });
      } finally {
        for (const p of [env.shop, env.billing, env.operator]) await p.transport.close();
      }
    } finally {
      await stopClusterMembers(members);
      await model.close();
      await nats.stop();
    }
  });

  it('with an account per project and NKey users (the accounts recipe): the same', { timeout: 120_000 }, async () => {
    const { seeds, restore } = withNkeys();
    const nats = await startNatsServer({ config: await documentedAccounts() });
    restore();
    const model = await startLoopbackModel({ mode: 'extractive' });
    const members: ClusterMember[] = [];
    try {
      members.push(await startClusterMember(nats.url, model, { cluster: false, auth: { nkeySeed: seeds.daemon } }));
      // Each account's inboxes are its own: the default prefix will do.
      const env = {
        shop: await party(nats.url, { nkeySeed: seeds.shop }, '_INBOX', 'shop'),
        billing: await party(nats.url, { nkeySeed: seeds.billing }, '_INBOX', 'billing'),
        operator: await party(nats.url, { nkeySeed: seeds.operator }, '_INBOX'),
      };
      try {
        await projectsStayApart({ ...env, records: countRecords(members.map((m) => m.log)), unknownCode: 'not_found', daemons: 1 });
      } finally {
        for (const p of [env.shop, env.billing, env.operator]) await p.transport.close();
      }
    } finally {
      await stopClusterMembers(members);
      await model.close();
      await nats.stop();
    }
  });

  it('on a 3-node cluster with two daemons in cluster mode: the same', { timeout: 180_000 }, async () => {
    const restore = withPasswords();
    const cluster = await startNatsCluster({ config: await documentedPermissions() });
    const model = await startLoopbackModel({ mode: 'extractive' });
    const members: ClusterMember[] = [];
    try {
      const [u1, u2, u3] = cluster.urls as [string, string, string];
      members.push(await startClusterMember(u1, model, { auth: DAEMON_AUTH }), await startClusterMember(u2, model, { auth: DAEMON_AUTH }));
      const env = await parties(u3);
      try {
        await projectsStayApart({ ...env, records: countRecords(members.map((m) => m.log)), unknownCode: 'no_responders', daemons: 2 });
      } finally {
        for (const p of [env.shop, env.billing, env.operator]) await p.transport.close();
      }
    } finally {
      await stopClusterMembers(members);
      await model.close();
      await cluster.stop();
      restore();
    }
  });
});

describe('a daemon serving the scoped subjects only (requireScopedSubjects)', () => {
  it('leaves the unscoped open and session subjects unanswered, publishes events on the scoped ones alone, and keeps the runtime subjects', async () => {
    const nats = await startNatsServer();
    const model = await startLoopbackModel({ mode: 'extractive' });
    const members: ClusterMember[] = [];
    const transport = await NatsTransport.connect({ servers: nats.url });
    try {
      members.push(await startClusterMember(nats.url, model, { cluster: false, requireScopedSubjects: true }));
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
      await stopClusterMembers(members);
      await model.close();
      await nats.stop();
    }
  });
});
