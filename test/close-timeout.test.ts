import { sessionLog, writerLog } from '@baton/log-schema';
import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/**
 * `close` waits for the running writer at most the configured close wait; a writer that never settles is then
 * cancelled by the session (the `writer.cancel` effect, run in the worker that hosts the writer), its cancellation is
 * logged, and the close is answered.
 */
describe('close with a writer that never settles', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 1, mode: 'scripted', daemon: { waits: { closeMs: 150 } } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('cancels the writer after the configured wait, logs its settlement and answers the close', async () => {
    const { session_id: sid } = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['95%'] } });
    await h.client.append(sid, conversation(3, { prefix: 'ct' }));
    // The writer's first model call never gets an answer.
    h.model.script({ stall: true });
    const started = h.client.waitForEvent(sid, (e) => e.type === 'writer.started', 10_000);
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    const writerId = ((await started) as { writer_id: string }).writer_id;
    await expect.poll(() => h.model.requests.length, { timeout: 10_000 }).toBe(1);

    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 10_000);
    expect(await h.client.close(sid, { timeoutMs: 10_000 })).toEqual({ ok: true });
    expect(await settled).toMatchObject({ writer_id: writerId, outcome: 'cancelled' });

    const session = [...sessionLog(h.log).read(sid)];
    const close = session.find((r) => r.type === 'close.requested');
    expect(close?.payload).toMatchObject({ waitMs: 150 });
    const fired = session.find((r) => r.type === 'timer.fired');
    expect(fired?.payload.timerId).toMatch(/-close-/);
    const settlement = session.find((r) => r.type === 'writer.settled');
    expect(settlement?.payload).toMatchObject({ writerId, outcome: 'cancelled', reason: 'session closing' });
    // The order of the log tells the story: the close, its timer, then the writer's cancellation.
    expect([close?.seq, fired?.seq, settlement?.seq].every((s, i, all) => s !== undefined && (i === 0 || s > (all[i - 1] ?? 0)))).toBe(true);
    const writer = [...writerLog(h.log).read(writerId)].map((r) => r.type);
    expect(writer).toEqual(['writer.started', 'writer.prepared', 'writer.cancel', 'snapshot']);
    expect((await h.client.status(sid)).state.writer).toBe('idle');
    expect(verifySession(h.log, sid).divergence).toBeNull();
  });
});
