import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { clusterNames, readClusterStatus, verifySession, type LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterMember, stopClusterMembers, type ClusterMember } from './support/cluster-member.ts';
import { MODEL, SYSTEM_PROMPT, conversation } from './support/conversation.ts';

interface Member extends ClusterMember {
  readonly hydrated: Map<string, Record<string, unknown>>;
}

async function member(nats: string, model: LoopbackModel, options: { dataDir?: string; cluster?: boolean; prefix?: string } = {}): Promise<Member> {
  const hydrated = new Map<string, Record<string, unknown>>();
  const m = await startClusterMember(nats, model, {
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
    cluster: options.cluster === false ? false : { leaseMs: 1_000, durability: 'replicated' },
    logger: (_level, msg, data) => {
      const sid = data?.['sessionId'];
      if (msg === 'session hydrated' && typeof sid === 'string') hydrated.set(sid, data ?? {});
    },
  });
  return { ...m, hydrated };
}

/** Message ids of every `messages.appended` record of a session in a log. */
function appendedIds(log: LmdbEventLog, sid: string): Set<string> {
  const ids = new Set<string>();
  for (const r of log.read(`session/${sid}`)) {
    if (r.type !== 'messages.appended') continue;
    for (const m of (r.payload as { messages: { id: string }[] }).messages) ids.add(m.id);
  }
  return ids;
}

describe('durability replicated: a session outlives the daemon and the disk it was written on', () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  const members: Member[] = [];
  let transport: NatsTransport;

  beforeAll(async () => {
    nats = await startNatsServer();
    model = await startLoopbackModel({ mode: 'extractive' });
    transport = await NatsTransport.connect({ servers: nats.url });
  });

  afterAll(async () => {
    await transport?.close();
    await stopClusterMembers(members);
    await model?.close();
    await nats?.stop();
  });

  it('a daemon that dies without handing off: another one on an empty disk takes its sessions over with every acknowledged append, and replay verifies them', async () => {
    const a = await member(nats.url, model);
    members.push(a);
    const client = new BatonClient(transport, { timeoutMs: 5_000, failover: { timeoutMs: 30_000 } });
    const acked = new Map<string, Set<string>>();
    const ack = (sid: string, ids: readonly { id: string }[]): void => {
      const set = acked.get(sid) ?? new Set<string>();
      for (const m of ids) set.add(m.id);
      acked.set(sid, set);
    };
    const sessions: string[] = [];
    for (let i = 0; i < 4; i++) {
      const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT });
      sessions.push(open.session_id);
    }
    // Enough turns to cross the first rung: each session runs a writer (its stream and commit replicated too).
    await Promise.all(
      sessions.map(async (sid, i) => {
        const messages = conversation(5, { prefix: `a${i}-` });
        for (let k = 0; k < messages.length; k += 4) {
          const batch = messages.slice(k, k + 4);
          await client.append(sid, batch);
          ack(sid, batch);
        }
        expect((await a.daemon.sessions.waitForWriterSettlement(sid, 20_000)).outcome).toMatch(/success|no-writer/);
      }),
    );
    const before = new Map(await Promise.all(sessions.map(async (sid) => [sid, await client.status(sid)] as const)));
    for (const s of before.values()) expect(s.state.watermark).not.toBeNull();
    const checkpointOf = (m: Member, sid: string): Promise<string> => readFile(join(m.dataDir, 'memory', 'sessions', sid, 'checkpoint.md'), 'utf8');
    const checkpoints = new Map(await Promise.all(sessions.map(async (sid) => [sid, await checkpointOf(a, sid)] as const)));

    // Daemon A's connection drops without a word (no hand-off, no heartbeat delete); B starts on an empty disk.
    await a.transport.connection.close();
    const b = await member(nats.url, model);
    members.push(b);

    // The client's next appends find no holder, reopen the session (B claims it once A's lease expired), and go on.
    const started = performance.now();
    await Promise.all(
      sessions.map(async (sid, i) => {
        const batch = conversation(6, { prefix: `a${i}-` }).slice(20, 24);
        await client.append(sid, batch);
        ack(sid, batch);
      }),
    );
    const takeoverMs = performance.now() - started;
    console.log(`takeover of ${sessions.length} sessions after the holder died: ${takeoverMs.toFixed(0)} ms (lease 1000 ms)`);

    for (const sid of sessions) {
      expect(b.hydrated.get(sid)).toMatchObject({ replaced: false });
      // Its checkpoint and notes (the project's MEMORY.md comes from the cluster's shared versions instead).
      expect(b.hydrated.get(sid)?.['files']).toBeGreaterThanOrEqual(2);
      const onB = appendedIds(b.log, sid);
      const missing = [...(acked.get(sid) ?? [])].filter((id) => !onB.has(id));
      expect(missing).toEqual([]);
      expect(onB.size).toBe(24);
      const status = await client.status(sid);
      expect(status.state.watermark).toEqual(before.get(sid)?.state.watermark);
      // The checkpoint itself came along: the same version, the same bytes on B's disk.
      expect(status.files.checkpoint).toEqual(before.get(sid)?.files.checkpoint);
      expect(await checkpointOf(b, sid)).toBe(checkpoints.get(sid));
      const verified = verifySession(b.log, sid);
      expect(verified.divergence).toBeNull();
      expect(verified.writers).toBeGreaterThan(0);
    }

    // The operators' views: B's own (runtime.status) and the cluster's as JetStream holds it (baton cluster status).
    const view = b.daemon.runtimeStatus().cluster;
    expect(view).toMatchObject({ durability: 'replicated', lease_ms: 1_000, paused: false, sessions_held: sessions.length });
    expect(view?.daemons.find((d) => d.daemon_id === a.daemon.id)).toMatchObject({ stale: true });
    expect(view?.daemons.find((d) => d.daemon_id === b.daemon.id)).toMatchObject({ stale: false });
    const status = await readClusterStatus(transport.connection, clusterNames(), Date.now);
    expect(status.daemons.map((d) => d.daemonId)).toContain(b.daemon.id);
    for (const sid of sessions) expect(status.sessions.find((s) => s.sessionId === sid)).toMatchObject({ daemonId: b.daemon.id, epoch: 2 });
    expect(status.log?.messages).toBeGreaterThan(0);
    // One server, no JetStream cluster: no replica to report.
    expect(status.bucket.replicas).toEqual([]);
  });

  it('replicates, on its first claim, a session written before its daemon ran with durability replicated', async () => {
    // A daemon alone (no cluster, its own prefix) writes a session; the same data directory then serves in cluster mode.
    const prefix = 'legacy';
    const alone = await member(nats.url, model, { cluster: false, prefix });
    // A safety net, not a speed check (no failover here: nothing is killed while it is used).
    const plain = new BatonClient(transport, { timeoutMs: 30_000, prefix });
    const sid = (await plain.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT })).session_id;
    // Enough turns for a writer: its checkpoint is committed before the session's records were ever replicated.
    await plain.append(sid, conversation(5, { prefix: 'old-' }));
    expect((await alone.daemon.sessions.waitForWriterSettlement(sid, 20_000)).outcome).toBe('success');
    const checkpoint = await readFile(join(alone.dataDir, 'memory', 'sessions', sid, 'checkpoint.md'), 'utf8');
    await alone.daemon.stop();
    await alone.transport.close();
    await alone.log.close();
    // A cluster daemon on an empty disk is already there; the old one joins, claims the session no daemon ever
    // claimed and writes its records to the replicated log, so the other forwards the open instead of taking the id
    // for a new session.
    const other = await member(nats.url, model, { prefix });
    members.push(other);
    const a = await member(nats.url, model, { dataDir: alone.dataDir, prefix });
    members.push(a);
    expect(a.hydrated.get(sid)).toMatchObject({ unreplicated: true, replaced: false });
    const client = new BatonClient(transport, { timeoutMs: 5_000, prefix, failover: { timeoutMs: 30_000 } });
    for (let i = 0; i < 4; i++) expect((await client.open({ session_id: sid, project_id: 'shop', model: MODEL })).resumed).toBe(true);
    await client.append(sid, conversation(6, { prefix: 'old-' }));
    // Its daemon goes silent; the other, on its empty disk, takes the session over with the records from before.
    await a.transport.connection.close();
    const b = other;
    await client.append(sid, conversation(7, { prefix: 'old-' }));
    expect(b.hydrated.get(sid)).toMatchObject({ unreplicated: false, replaced: false });
    expect(appendedIds(b.log, sid)).toEqual(new Set(conversation(7, { prefix: 'old-' }).map((m) => m.id)));
    // The writer's commit from before replication came along with the records: its checkpoint is on B's empty disk.
    expect(await readFile(join(b.dataDir, 'memory', 'sessions', sid, 'checkpoint.md'), 'utf8')).toBe(checkpoint);
    expect((await client.status(sid)).files.checkpoint.exists).toBe(true);
    expect(verifySession(b.log, sid).divergence).toBeNull();
  });
});
