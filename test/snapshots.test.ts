import { SNAPSHOT_KEY, type SessionSnapshot } from '@baton/log-schema';
import { type Message, type StatusReply } from '@baton/protocol';
import { toProviderMessage, verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { RecordingLog } from './support/recording-log.ts';
import { startRestartRig, type RestartRig } from './support/restart-rig.ts';

/** Snapshot records of a session stream, oldest first. */
function snapshotsOf(records: Iterable<{ type: string; seq: number; payload: unknown }>): { seq: number; payload: SessionSnapshot }[] {
  return [...records].filter((r) => r.type === 'snapshot').map((r) => ({ seq: r.seq, payload: r.payload as SessionSnapshot }));
}

const INPUT_TYPES = new Set(['session.opened', 'decision', 'snapshot']);

/**
 * A daemon that writes a snapshot every 3 inputs: after a restart the session loads from its newest snapshot and the
 * inputs after it (what the daemon reads from the log shows it), answers as before, and keeps working — appends with
 * dedupe, a fork-mode writer whose prefix is the whole conversation — while `verifySession` checks every snapshot
 * against a full re-fold.
 */
describe('snapshots in the session log', () => {
  let rig: RestartRig;
  beforeAll(async () => {
    rig = await startRestartRig({ poolSize: 1, daemon: { residency: { snapshotEvery: 3 } } });
  });
  afterAll(async () => {
    await rig.close();
  });

  it('writes snapshots, loads from the newest one after a restart and continues correctly', async () => {
    await rig.start();
    const { client } = rig;
    const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    const sid = open.session_id;
    const stream = `session/${sid}`;
    const messages = conversation(6);
    // Four appends (the last one crosses 9 600 and starts a writer), its settlement, two more appends, a manual
    // checkpoint and its settlement, and the stop's drain: 10 inputs, so snapshots after inputs 3, 6 and 9.
    const first = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
    for (let i = 0; i < 16; i += 4) await client.append(sid, messages.slice(i, i + 4));
    expect(await first).toMatchObject({ outcome: 'success' });
    await client.append(sid, messages.slice(16, 20));
    await client.append(sid, messages.slice(20, 24));
    const second = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
    expect((await client.checkpoint(sid)).result).toBe('started');
    expect(await second).toMatchObject({ outcome: 'success' });
    const before: StatusReply = await client.status(sid);
    expect(before.last_outcome).toMatchObject({ outcome: 'success' });
    await rig.stopDaemon();

    const stored = await rig.withLog((log) => {
      const records = [...log.read(stream)];
      const snapshots = snapshotsOf(records);
      const inputs = records.filter((r) => !INPUT_TYPES.has(r.type));
      const verified = verifySession(log, sid);
      return { records, snapshots, inputs, verified, newestKey: log.keySeq(stream, SNAPSHOT_KEY) };
    });
    expect(stored.inputs).toHaveLength(10);
    // A snapshot every 3 inputs, each covering the input it follows; the snapshot key names the newest.
    expect(stored.snapshots.map((s) => stored.inputs.findIndex((r) => r.seq === s.payload.for) + 1)).toEqual([3, 6, 9]);
    const newest = stored.snapshots.at(-1);
    if (newest === undefined) throw new Error('no snapshot');
    expect(stored.newestKey).toBe(newest.seq);
    expect(stored.verified.divergence).toBeNull();
    expect(stored.verified.snapshots).toBe(3);
    expect(stored.verified.sessionEvents).toBe(10);

    // Restart; the session is loaded by its first request.
    let recording: RecordingLog | null = null;
    await rig.start({
      wrapLog: (log) => {
        recording = new RecordingLog(log);
        return recording;
      },
    });
    const reads = recording as RecordingLog | null;
    if (reads === null) throw new Error('the daemon did not take the recording log');
    const after = await client.status(sid);
    expect(after).toStrictEqual(before);
    // Loading read `session.opened`, the newest snapshot and the inputs after it, nothing the snapshot covers.
    const read = reads.readSeqs.get(stream) ?? [];
    expect(read).toContain(1);
    expect(read).toContain(newest.seq);
    const inputsRead = read.filter((seq) => stored.inputs.some((r) => r.seq === seq));
    expect(inputsRead).toEqual(stored.inputs.filter((r) => r.seq > newest.payload.for).map((r) => r.seq));
    expect(inputsRead).toHaveLength(1);
    expect(read.filter((seq) => seq > 1 && seq <= newest.payload.for)).toEqual([]);

    // The agent resumes it (the stop drained it). It keeps working: re-sent ids are duplicates, new messages are
    // accepted, a writer forks the whole conversation.
    expect(await client.open({ session_id: sid, project_id: 'shop', model: MODEL })).toMatchObject({ resumed: true });
    const again = await client.append(sid, messages.slice(0, 3));
    expect(again).toMatchObject({ accepted: 0, duplicates: 3 });
    const more: Message[] = conversation(2, { prefix: 'n', start: 15_000, step: 1_000 });
    expect((await client.append(sid, more)).accepted).toBe(more.length);
    rig.model.reset();
    const third = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
    const started = client.waitForEvent(sid, (e) => e.type === 'writer.started', 30_000);
    expect(await client.checkpoint(sid)).toMatchObject({ result: 'started' });
    const start = await started;
    expect(await third).toMatchObject({ outcome: 'success' });
    if (start.type !== 'writer.started') throw new Error('no writer.started');
    const all = [...messages, ...more];
    const boundary = all.findIndex((m) => m.id === start.covers_up_to);
    expect(boundary).toBeGreaterThan(0);
    const prefix = [{ role: 'system', content: SYSTEM_PROMPT }, ...all.slice(0, boundary + 1).map(toProviderMessage)];
    const sent = JSON.parse(rig.model.requests[0]?.rawBody ?? '{}') as { messages: unknown[] };
    expect(JSON.stringify(sent.messages.slice(0, prefix.length))).toBe(JSON.stringify(prefix));
    const last = await client.status(sid);
    expect(last.last_outcome).toMatchObject({ outcome: 'success', writer_id: start.writer_id });
    expect(last.files.checkpoint.version).toBe(before.files.checkpoint.version + 1);
    await rig.stopDaemon();

    const final = await rig.withLog((log) => ({ verified: verifySession(log, sid), snapshots: snapshotsOf(log.read(stream)).length }));
    expect(final.verified.divergence).toBeNull();
    expect(final.snapshots).toBeGreaterThan(3);
    expect(final.verified.snapshots).toBe(final.snapshots);
  });
});
