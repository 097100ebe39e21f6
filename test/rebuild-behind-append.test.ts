import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { RecordingLog, type RecordedAppend } from './support/recording-log.ts';
import { startRestartRig, type RestartRig } from './support/restart-rig.ts';

/** The append call of `stream` that carried a record of `type` (the last one when several did). */
function appendOf(log: RecordingLog, stream: string, type: string): RecordedAppend {
  const call = log.appends.findLast((a) => a.stream === stream && a.types.includes(type));
  if (call === undefined) throw new Error(`no append of ${type} to ${stream}`);
  return call;
}

/**
 * A rebuild a client sends right behind an append of the same session, without waiting for the append's answer (as
 * the gateway does with an overflowing call): the daemon logs the rebuild request with the append's records — one
 * commit — and folds it after them, so the rebuilt context holds what the append brought; the log replays as it ran.
 * Over a real nats-server and LMDB log.
 */
describe('a rebuild behind an append', () => {
  let rig: RestartRig;
  let log: RecordingLog | null = null;
  beforeAll(async () => {
    rig = await startRestartRig({ poolSize: 1 });
    await rig.start({
      wrapLog: (inner) => {
        log = new RecordingLog(inner);
        return log;
      },
    });
  });
  afterAll(async () => {
    await rig.close();
  });

  /** A session with a checkpoint written (one rung, crossed by the first messages). */
  async function withCheckpoint(): Promise<string> {
    const { client } = rig;
    const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['20%'] } });
    const sid = open.session_id;
    const settled = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    await client.append(sid, conversation(4));
    expect(await settled).toMatchObject({ outcome: 'success' });
    return sid;
  }

  function recording(): RecordingLog {
    if (log === null) throw new Error('the daemon did not take the recording log');
    return log;
  }

  it('logs the rebuild request in the append commit, folds it after the messages and rebuilds over them', async () => {
    const sid = await withCheckpoint();
    const stream = `session/${sid}`;
    const later = conversation(2, { prefix: 'n', start: 47_000, step: 1_000 });
    const appending = rig.client.append(sid, later);
    const rebuilding = rig.client.rebuild(sid, { reason: 'overflow' });
    expect((await appending).accepted).toBe(later.length);
    const reply = await rebuilding;

    expect(reply.outcome).toBe('rebuilt');
    // The rebuild saw the append: the newest message is in the preserved tail.
    expect(reply.context.map((m) => m.id)).toContain(later.at(-1)?.id);
    // The rebuild request was handed to the log while the messages were still on their way to disk: one commit.
    const messages = appendOf(recording(), stream, 'messages.appended');
    const requested = appendOf(recording(), stream, 'rebuild.requested');
    expect(requested.pendingAtCall).toContain(messages);
    const types = [...rig.current.log.read(stream)].map((r) => r.type);
    expect(types.lastIndexOf('messages.appended')).toBeLessThan(types.indexOf('rebuild.requested'));
    expect(types.indexOf('rebuild.requested')).toBeLessThan(types.indexOf('rebuild.rendered'));
    expect(verifySession(rig.current.log, sid).divergence).toBeNull();
  });

  it('goes in its turn behind an append that logs nothing (every message a duplicate)', async () => {
    const sid = await withCheckpoint();
    const stream = `session/${sid}`;
    const appending = rig.client.append(sid, conversation(4).slice(-2));
    const rebuilding = rig.client.rebuild(sid, { reason: 'manual' });
    expect(await appending).toMatchObject({ accepted: 0, duplicates: 2 });
    expect((await rebuilding).outcome).toBe('rebuilt');
    // Nothing was appended before it: the request has its own commit.
    expect(appendOf(recording(), stream, 'rebuild.requested').pendingAtCall.filter((a) => a.stream === stream)).toEqual([]);
    expect(verifySession(rig.current.log, sid).divergence).toBeNull();
  });

  it('is refused behind an append as it would be after it: a second rebuild while one is in progress', async () => {
    const sid = await withCheckpoint();
    // A rebuild that waits for a writer (a manual checkpoint started one) is in progress…
    expect((await rig.client.checkpoint(sid)).result).toBe('started');
    const first = rig.client.rebuild(sid, { reason: 'overflow' });
    await rig.client.waitForEvent(sid, (e) => e.type === 'status' && e.text === 'Preparing conversation context…', 20_000);
    // …so one sent behind an append is refused, and the append itself goes through.
    const more = conversation(1, { prefix: 'x', start: 47_000 });
    const appending = rig.client.append(sid, more);
    const second = rig.client.rebuild(sid, { reason: 'overflow' });
    await expect(second).rejects.toMatchObject({ code: 'conflict' });
    expect((await appending).accepted).toBe(more.length);
    expect((await first).outcome).toBe('rebuilt');
    expect(verifySession(rig.current.log, sid).divergence).toBeNull();
  });
});
