import { BatonClient, BatonRequestError, NatsTransport, TransportError } from '@baton/client';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterMember, stopClusterMembers, type ClusterMember } from './support/cluster-member.ts';
import { MODEL, SYSTEM_PROMPT, conversation } from './support/conversation.ts';

/** `session claimed` log lines, by session id, of every daemon. */
const claims = new Map<string, number>();

function member(nats: string, model: LoopbackModel, reuse?: string): Promise<ClusterMember> {
  return startClusterMember(nats, model, {
    ...(reuse !== undefined ? { dataDir: reuse } : {}),
    cluster: { leaseMs: 3_000 },
    logger: (_level, msg, data) => {
      const sid = data?.['sessionId'];
      if (msg === 'session claimed' && typeof sid === 'string') claims.set(sid, (claims.get(sid) ?? 0) + 1);
    },
  });
}

/** Every error a request could meet when it reaches a daemon that does not hold the session. */
function describeFailure(err: unknown): string {
  if (err instanceof BatonRequestError || err instanceof TransportError) return err.code;
  return String(err);
}

describe('two daemons in cluster mode on one plain NATS server', () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  let members: ClusterMember[];
  let transport: NatsTransport;
  let client: BatonClient;

  beforeAll(async () => {
    nats = await startNatsServer();
    model = await startLoopbackModel({ mode: 'extractive' });
    members = [await member(nats.url, model), await member(nats.url, model)];
    transport = await NatsTransport.connect({ servers: nats.url });
    client = new BatonClient(transport, { timeoutMs: 10_000 });
  });

  afterAll(async () => {
    await transport?.close();
    await stopClusterMembers(members ?? []);
    await model?.close();
    await nats?.stop();
  });

  it('answers every request of every session from the daemon that holds it, none not_found', async () => {
    const sessions: string[] = [];
    for (let i = 0; i < 16; i++) {
      const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, checkpoint: { enabled: false } });
      sessions.push(open.session_id);
    }
    const failures: string[] = [];
    const note = (err: unknown): void => {
      failures.push(describeFailure(err));
    };
    await Promise.all(
      sessions.map(async (sid, i) => {
        const messages = conversation(6, { prefix: `s${i}-` });
        for (let k = 0; k < messages.length; k += 4) await client.append(sid, messages.slice(k, k + 4)).catch(note);
        await client.tasks(sid, [{ id: 'T1', status: 'in_progress', summary: 'fix the tests' }]).catch(note);
        const status = await client.status(sid).catch(note);
        if (status !== undefined) expect(status.state.tokens).toBeGreaterThan(0);
        // Opening it again goes through the queue group to either daemon: the other one forwards to the holder.
        for (let k = 0; k < 4; k++) {
          const again = await client.open({ session_id: sid, project_id: 'shop', model: MODEL }).catch(note);
          if (again !== undefined) expect(again.resumed).toBe(true);
        }
        const dup = await client.append(sid, messages.slice(0, 4)).catch(note);
        if (dup !== undefined) expect(dup).toMatchObject({ accepted: 0, duplicates: 4 });
      }),
    );
    expect(failures).toEqual([]);

    // Both daemons hold sessions, and each session's records are on its holder's disk alone.
    const held = members.map((m) => new Set(m.daemon.runtimeSessions({ limit: 1000 }).sessions.map((s) => s.session_id)));
    expect(held.every((h) => h.size > 0)).toBe(true);
    for (const sid of sessions) {
      const where = members.filter((m) => m.log.lastSeq(`session/${sid}`) > 0);
      expect(where).toHaveLength(1);
      // Claimed once: the reopenings that reached the other daemon were forwarded, not taken over.
      expect(claims.get(sid)).toBe(1);
    }
  });

  it('keeps an unknown session on the daemon that takes it, and refuses nothing it may serve', async () => {
    // A client that names a new session id: whichever daemon takes the open holds it.
    const sid = 'named-by-the-client';
    const open = await client.open({ session_id: sid, project_id: 'shop', model: MODEL, checkpoint: { enabled: false } });
    expect(open).toMatchObject({ session_id: sid, resumed: false });
    const reply = await client.append(sid, conversation(1, { prefix: 'n-' }));
    expect(reply.accepted).toBe(4);
    expect(members.filter((m) => m.log.lastSeq(`session/${sid}`) > 0)).toHaveLength(1);
  });

  it('follows a session to the daemon restarted on its disk (durability local), the client reopening it on its own', async () => {
    let reopened = 0;
    const failover = new BatonClient(transport, { timeoutMs: 5_000, failover: { timeoutMs: 30_000, onReopened: () => void reopened++ } });
    const open = await failover.open({ project_id: 'shop', model: MODEL, checkpoint: { enabled: false } });
    const sid = open.session_id;
    await failover.append(sid, conversation(2, { prefix: 'r-' }));
    const index = members.findIndex((m) => m.log.lastSeq(`session/${sid}`) > 0);
    const holder = members[index] as ClusterMember;
    // The holder stops (handing its sessions off) and comes back on the same data directory as a new daemon; the
    // other daemon cannot take the session meanwhile (its records are on the holder's disk) and says so.
    await holder.daemon.stop();
    await holder.transport.close();
    await holder.log.close();
    const appended = failover.append(sid, conversation(3, { prefix: 'r-' }));
    const [reply, back] = await Promise.all([appended, member(nats.url, model, holder.dataDir)]);
    members[index] = back;
    expect(reply).toMatchObject({ accepted: 4, duplicates: 8 });
    expect(back.log.lastSeq(`session/${sid}`)).toBeGreaterThan(0);
    expect(members.filter((m) => m.log.lastSeq(`session/${sid}`) > 0)).toHaveLength(1);
    expect(reopened).toBe(1);
  });
});
