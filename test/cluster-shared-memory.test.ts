import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { parseStream, sessionWritersPrefix } from '@baton/log-schema';
import { clusterNames, readClusterStatus, type LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel, startNatsCluster, type LoopbackModel, type NatsClusterHandle } from '@baton/testing';
import { Kvm } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterMember, stopClusterMembers, type ClusterMember } from './support/cluster-member.ts';
import { MODEL, SYSTEM_PROMPT, conversation } from './support/conversation.ts';

type Member = ClusterMember;

const MEMORY_REL = join('projects', 'shop', 'MEMORY.md');
const ruleOf = (writerId: string): string => `- rule recorded by writer ${writerId}`;

function member(url: string, model: LoopbackModel): Promise<Member> {
  return startClusterMember(url, model, { cluster: { leaseMs: 3_000, replicas: 3 } });
}

/** How each writer of a session ended its commit, from the holder's log: committed MEMORY.md, or found a conflict. */
function memoryCommits(log: LmdbEventLog, sid: string): { committed: string[]; conflicted: string[] } {
  const committed: string[] = [];
  const conflicted: string[] = [];
  for (const stream of log.streams(sessionWritersPrefix(sid))) {
    const kind = parseStream(stream);
    if (kind?.kind !== 'writer') continue;
    for (const r of log.read(stream)) {
      if (r.type !== 'commit.completed') continue;
      const p = r.payload as { files: { path: string }[]; conflicts?: string[] };
      if (p.files.some((f) => f.path.endsWith(`/${MEMORY_REL}`))) committed.push(kind.writerId);
      if ((p.conflicts ?? []).includes(MEMORY_REL)) conflicted.push(kind.writerId);
    }
  }
  return { committed, conflicted };
}

describe('cluster: the project MEMORY.md written by writers of sessions on different daemons', () => {
  let cluster: NatsClusterHandle;
  let model: LoopbackModel;
  const members: Member[] = [];
  const clients: NatsTransport[] = [];

  beforeAll(async () => {
    cluster = await startNatsCluster();
    // Every writer adds a rule naming itself to the project's MEMORY.md (the staged paths name the writer).
    model = await startLoopbackModel({
      mode: 'extractive',
      extractive: { memoryRule: (paths) => /\/staging\/([^/]+)\//.exec(paths.checkpoint)?.[1]?.replace(/^/, 'rule recorded by writer ') },
    });
  }, 120_000);

  afterAll(async () => {
    for (const t of clients) await t.close().catch(() => {});
    await stopClusterMembers(members);
    await model?.close();
    await cluster?.stop();
  });

  it('never loses an update: each shared version holds every rule of the one before, every committed rule is in the newest, and both daemons end with it', async () => {
    const [u1, u2] = cluster.urls as [string, string, string];
    const a = await member(u1, model);
    const b = await member(u2, model);
    members.push(a, b);
    // A client on each node: NATS hands a queue-group request to a subscriber on the requester's own server first,
    // so each client's sessions are mostly opened on the daemon beside it.
    const sessions: { sid: string; client: BatonClient }[] = [];
    for (const url of [u1, u2]) {
      const t = await NatsTransport.connect({ servers: url });
      clients.push(t);
      const client = new BatonClient(t, { timeoutMs: 10_000 });
      for (let i = 0; i < 3; i++) sessions.push({ sid: (await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT })).session_id, client });
    }
    let status = await readClusterStatus(a.transport.connection, clusterNames(), Date.now);
    // Locality is a preference, not a rule (a subscription still propagating, a reconnect): while one daemon holds
    // every session, open more, alternating between the clients, until the other holds one too.
    const owners = (): Set<string> => new Set(sessions.flatMap((s) => status.sessions.find((o) => o.sessionId === s.sid)?.daemonId ?? []));
    for (let extra = 0; owners().size < 2 && extra < 12; extra++) {
      const client = sessions[extra % 2 === 0 ? 0 : 3]?.client as BatonClient;
      sessions.push({ sid: (await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT })).session_id, client });
      status = await readClusterStatus(a.transport.connection, clusterNames(), Date.now);
    }
    const holder = (sid: string): Member => {
      const id = status.sessions.find((s) => s.sessionId === sid)?.daemonId;
      const m = members.find((x) => x.daemon.id === id);
      if (m === undefined) throw new Error(`no holder for ${sid}`);
      return m;
    };
    expect(new Set(sessions.map((s) => holder(s.sid).daemon.id)).size).toBe(2);

    // Three phases of turns, each crossing a rung, so every session runs a writer per phase: in the first and the last
    // all sessions at once (their writers race for the next version); in the second one after the other, alternating
    // between the daemons (each writer must build on the version the other daemon's writer just made).
    const turn = async (i: number, turns: number): Promise<void> => {
      const { sid, client } = sessions[i] as (typeof sessions)[number];
      const all = conversation(turns, { prefix: `s${i}-` });
      await client.append(sid, all.slice(turns === 5 ? 0 : (turns - 4) * 4));
      const settled = await holder(sid).daemon.sessions.waitForWriterSettlement(sid, 30_000);
      expect(settled.outcome).toMatch(/success|no-writer/);
    };
    await Promise.all(sessions.map((_, i) => turn(i, 5)));
    const onA = sessions.flatMap((s, i) => (holder(s.sid) === a ? [i] : []));
    const onB = sessions.flatMap((s, i) => (holder(s.sid) === b ? [i] : []));
    const alternating = Array.from({ length: Math.max(onA.length, onB.length) }, (_, k) => [onA[k], onB[k]]).flat().filter((i): i is number => i !== undefined);
    const sequentialFrom = new Map<string, number>();
    for (const i of alternating) {
      sequentialFrom.set((sessions[i] as (typeof sessions)[number]).sid, memoryCommits(holder((sessions[i] as (typeof sessions)[number]).sid).log, (sessions[i] as (typeof sessions)[number]).sid).committed.length);
      await turn(i, 9);
    }
    // With no other writer at work, every writer of the second phase committed its rule on the newest version.
    for (const { sid } of sessions) expect(memoryCommits(holder(sid).log, sid).committed.length).toBe((sequentialFrom.get(sid) ?? 0) + 1);
    await Promise.all(sessions.map((_, i) => turn(i, 13)));

    const committed: string[] = [];
    const conflicted: string[] = [];
    for (const { sid } of sessions) {
      const c = memoryCommits(holder(sid).log, sid);
      committed.push(...c.committed);
      conflicted.push(...c.conflicted);
    }
    const daemonOf = (writerId: string): string => holder(sessions.find((s) => writerId.startsWith(`${s.sid}-w`))?.sid ?? '').daemon.id;
    console.log(`MEMORY.md: ${committed.length} writers committed, ${conflicted.length} found another daemon's or writer's update first`);
    // Writers on both daemons changed the one shared file.
    expect(new Set(committed.map(daemonOf)).size).toBe(2);

    // The version chain in JetStream: one version per committing writer, each holding every rule of the one before.
    const kv = await new Kvm(jetstream(a.transport.connection)).open(clusterNames().bucket);
    const versions: string[] = [];
    for (let n = 1; ; n++) {
      const entry = await kv.get(`mem.shop.MEMORY.${n}`);
      if (entry === null) break;
      versions.push(new TextDecoder().decode((unpack(entry.value) as { data: Uint8Array }).data));
    }
    expect(versions).toHaveLength(committed.length);
    const rules = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('- rule recorded by writer '));
    for (let i = 1; i < versions.length; i++) {
      const before = rules(versions[i - 1] as string);
      const after = rules(versions[i] as string);
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after).toHaveLength(before.length + 1);
    }
    const newest = versions.at(-1) as string;
    expect(new Set(rules(newest))).toEqual(new Set(committed.map(ruleOf)));
    for (const w of conflicted) expect(newest).not.toContain(ruleOf(w));

    // Both daemons' live copies reach the newest version (each follows the other's commits).
    const live = (m: Member): Promise<string | null> => readFile(join(m.dataDir, 'memory', MEMORY_REL), 'utf8').catch(() => null);
    const deadline = Date.now() + 15_000;
    while (((await live(a)) !== newest || (await live(b)) !== newest) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await live(a)).toBe(newest);
    expect(await live(b)).toBe(newest);
  }, 240_000);
});
