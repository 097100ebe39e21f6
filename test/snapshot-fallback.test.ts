import type { SessionSnapshot } from '@baton/log-schema';
import { SNAPSHOT_KEY } from '@baton/log-schema';
import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startRestartRig, type RestartRig } from './support/restart-rig.ts';

/** How the newest snapshot is spoiled while the daemon is down (it is derived state; the inputs are intact). */
interface Spoil {
  readonly name: string;
  payload(good: SessionSnapshot): unknown;
}

const SPOILS: readonly Spoil[] = [
  { name: 'a snapshot that does not match its schema', payload: (good) => ({ ...good, for: 'yesterday' }) },
  { name: 'a snapshot naming a state the machine does not have', payload: (good) => ({ ...good, state: { ...good.state, value: { lifecycle: 'exploded' } } }) },
];

/**
 * A session whose newest snapshot is unusable loads by folding every input instead: the same status as before, it
 * keeps accepting messages, and `verifySession` still names the bad snapshot.
 */
describe.each(SPOILS)('loading past $name', (spoil) => {
  let rig: RestartRig;
  beforeAll(async () => {
    rig = await startRestartRig({ poolSize: 1, daemon: { residency: { snapshotEvery: 2 } } });
  });
  afterAll(async () => {
    await rig.close();
  });

  it('folds every input and serves the session as before', async () => {
    await rig.start();
    const { client } = rig;
    const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    const sid = open.session_id;
    const stream = `session/${sid}`;
    const messages = conversation(3);
    for (let i = 0; i < 12; i += 4) await client.append(sid, messages.slice(i, i + 4));
    const before = await client.status(sid);
    await rig.stopDaemon();

    const spoiled = await rig.withLog(async (log) => {
      const goodSeq = log.keySeq(stream, SNAPSHOT_KEY);
      if (goodSeq === undefined) throw new Error('no snapshot was written');
      const [good] = [...log.read(stream, { from: goodSeq, to: goodSeq })];
      const last = [...log.read(stream)].at(-1);
      const [result] = await log.append(stream, [{ type: 'snapshot', at: (last?.at ?? 0) + 1, payload: spoil.payload(good?.payload as SessionSnapshot), keys: [SNAPSHOT_KEY] }]);
      return { seq: result?.seq, key: log.keySeq(stream, SNAPSHOT_KEY) };
    });
    expect(spoiled.key).toBe(spoiled.seq);

    await rig.start();
    expect(await client.status(sid)).toStrictEqual(before);
    const more = conversation(1, { prefix: 'n', start: 15_000, step: 1_000 });
    expect((await client.append(sid, more)).accepted).toBe(more.length);
    expect((await client.append(sid, messages.slice(0, 2))).duplicates).toBe(2);
    await rig.stopDaemon();

    const verified = await rig.withLog((log) => verifySession(log, sid));
    expect(verified.divergence).toMatchObject({ stream, seq: spoiled.seq });
  });
});
