import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';
import { startRestartRig, type RestartRig } from './support/restart-rig.ts';

/** Scenarios 17 and 19 (bounded waits, drain) over a real nats-server, with a model that stalls. */
describe('waits and drain', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 1, mode: 'scripted' });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('scenario 17: a wait on a stalled writer times out and the writer keeps running; with no writer it is no-writer', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['90%'] } });
    const sid = open.session_id;
    expect(await h.daemon.sessions.waitForWriterSettlement(sid, 50)).toEqual({ outcome: 'no-writer' });
    await h.client.append(sid, conversation(3));
    h.model.script({ stall: true });
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    expect(await h.daemon.sessions.waitForWriterSettlement(sid, 100)).toEqual({ outcome: 'timeout' });
    expect((await h.client.status(sid)).state.writer).toBe('running');
  });

  it('scenario 19: drain reports the hanging writer as timed out without cancelling it, drops the queued request and refuses new work', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['90%'] } });
    const sid = open.session_id;
    await h.client.append(sid, conversation(3, { prefix: 'd' }));
    h.model.script({ stall: true });
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    expect((await h.client.checkpoint(sid)).result).toBe('queued');
    const report = await h.client.drain(100);
    // Two stalled writers (this session's and the previous test's) are still running; one queued request was dropped.
    expect(report).toEqual({ ok: true, drained: 0, timed_out: 2, dropped: 1 });
    expect((await h.client.runtimeStatus()).writers.running).toBe(2);
    await expect(h.client.status(sid)).rejects.toMatchObject({ code: 'unavailable' });
    const records = [...h.log.read(`session/${sid}`)].map((r) => r.type);
    expect(records).toContain('drain.requested');
    // Stopping cancels the writers still running; their settlement is logged.
    await h.daemon.stop();
    const last = [...h.log.read(`session/${sid}`)].filter((r) => r.type === 'writer.settled').at(-1);
    expect(last?.payload).toMatchObject({ outcome: 'cancelled' });
  });
});

/** A drain belongs to the process that asked for it: the next daemon lifts it when it loads the session. */
describe('drain across a restart', () => {
  let rig: RestartRig;
  beforeAll(async () => {
    rig = await startRestartRig({ poolSize: 1 });
  });
  afterAll(async () => {
    await rig.close();
  });

  it('logs drain.lifted on load and lets writers start again', async () => {
    await rig.start();
    const { client } = rig;
    const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['90%'] } });
    const sid = open.session_id;
    await client.append(sid, conversation(3));
    expect(await client.drain(1_000)).toMatchObject({ ok: true, timed_out: 0 });
    await rig.stopDaemon();
    const drained = await rig.withLog((log) => [...log.read(`session/${sid}`)].map((r) => r.type));
    expect(drained).toContain('drain.requested');
    expect(drained).not.toContain('drain.lifted');

    await rig.start();
    expect(await client.open({ session_id: sid, project_id: 'shop', model: MODEL })).toMatchObject({ resumed: true });
    const settled = client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
    expect((await client.checkpoint(sid)).result).toBe('started');
    expect(await settled).toMatchObject({ outcome: 'success' });
    await rig.stopDaemon();
    const after = await rig.withLog((log) => ({ types: [...log.read(`session/${sid}`)].map((r) => r.type), verified: verifySession(log, sid) }));
    expect(after.types.filter((t) => t === 'drain.lifted')).toHaveLength(1);
    expect(after.types.indexOf('drain.lifted')).toBeLessThan(after.types.indexOf('checkpoint.requested'));
    expect(after.verified.divergence).toBeNull();
  });
});
