import { BatonRequestError } from '@baton/client';
import type { AppendInput, StoredRecord } from '@baton/log-schema';
import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startRestartRig, type RestartRig } from './support/restart-rig.ts';

/** How a session's log is damaged while the daemon is down: one record appended directly through `LmdbEventLog`. */
interface Damage {
  readonly name: string;
  record(at: number): AppendInput;
}

const DAMAGES: readonly Damage[] = [
  {
    name: 'a messages.appended whose payload does not match its schema',
    record: (at) => ({ type: 'messages.appended', at, payload: { messages: [{ id: 42, role: 'narrator' }] } }),
  },
  {
    name: 'a writer.settled with a bogus outcome',
    record: (at) => ({ type: 'writer.settled', at, payload: { writerId: 'nobody-w9', outcome: 'exploded' } }),
  },
  {
    // Valid against the schema (content parts are open objects), but indexing it fails in the worker's fold.
    name: 'a messages.appended the actor cannot fold (a bigint in a content part)',
    record: (at) => ({ type: 'messages.appended', at, payload: { messages: [{ id: 'big', role: 'user', content: [{ type: 'text', text: 'x', n: 2n ** 60n }] }] } }),
  },
  {
    name: 'a record of a type no session stream has',
    record: (at) => ({ type: 'session.exploded', at, payload: {} }),
  },
];

async function rejection(p: Promise<unknown>): Promise<BatonRequestError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof BatonRequestError)) throw new Error(`expected a BatonRequestError, got ${String(err)}`);
  return err;
}

/**
 * A session whose log holds a record that cannot be folded or does not match its schema is quarantined: each of its
 * requests gets `quarantined` naming the record, its log is left as it is, the other session on the same daemon (and
 * the same worker) keeps serving, and `verifySession` reports the divergence at that record.
 */
describe.each(DAMAGES)('quarantine after $name', (damage) => {
  let rig: RestartRig;
  beforeAll(async () => {
    rig = await startRestartRig({ poolSize: 1 });
  });
  afterAll(async () => {
    await rig.close();
  });

  it('answers quarantined for that session only and leaves its log unchanged', async () => {
    await rig.start();
    const { client } = rig;
    const openA = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    const openB = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    const a = openA.session_id;
    const b = openB.session_id;
    await client.append(a, conversation(2, { prefix: 'a' }));
    await client.append(b, conversation(2, { prefix: 'b' }));
    await rig.stopDaemon();

    const streamA = `session/${a}`;
    const damaged = await rig.withLog(async (log) => {
      const last = [...log.read(streamA)].at(-1);
      const [result] = await log.append(streamA, [damage.record((last?.at ?? 0) + 1)]);
      if (result === undefined) throw new Error('append returned nothing');
      return { seq: result.seq, records: [...log.read(streamA)] };
    });
    expect(damaged.seq).toBe(damaged.records.length);

    const { daemon } = await rig.start();
    const named = `session/${a}#${damaged.seq}`;
    const requests: [string, () => Promise<unknown>][] = [
      ['status', () => client.status(a)],
      ['append', () => client.append(a, conversation(1, { prefix: 'late' }))],
      ['tasks', () => client.tasks(a, [{ id: 't1', status: 'open', summary: 'one' }])],
      ['checkpoint', () => client.checkpoint(a)],
      ['rebuild', () => client.rebuild(a, { reason: 'manual', wait_ms: 1_000 })],
      ['open', () => client.open({ session_id: a, project_id: 'shop', model: MODEL })],
      ['close', () => client.close(a)],
      ['status again', () => client.status(a)],
    ];
    for (const [name, request] of requests) {
      const err = await rejection(request());
      expect(err.code, name).toBe('quarantined');
      expect(err.message, name).toContain(named);
    }
    expect([...daemon.sessions.quarantinedSessions().keys()]).toEqual([a]);

    // The other session, on the same worker, keeps serving (resumed: the daemon's stop drained it).
    expect(await client.open({ session_id: b, project_id: 'shop', model: MODEL })).toMatchObject({ resumed: true });
    const more = await client.append(b, conversation(1, { prefix: 'b-more', start: 7_000 }));
    expect(more.accepted).toBe(4);
    expect((await client.append(b, conversation(1, { prefix: 'b' }))).duplicates).toBe(4);
    const settled = client.waitForEvent(b, (e) => e.type === 'writer.settled', 30_000);
    expect((await client.checkpoint(b)).result).toBe('started');
    expect(await settled).toMatchObject({ outcome: 'success' });
    expect((await client.status(b)).last_outcome).toMatchObject({ outcome: 'success' });
    await rig.stopDaemon();

    const after = await rig.withLog((log) => ({
      records: [...log.read(streamA)] as StoredRecord[],
      verifiedA: verifySession(log, a),
      verifiedB: verifySession(log, b),
    }));
    // The failed requests wrote nothing to A's log.
    expect(after.records).toStrictEqual(damaged.records);
    expect(after.verifiedA.divergence).toMatchObject({ stream: streamA, seq: damaged.seq });
    expect(after.verifiedB.divergence).toBeNull();
  });
});
