import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/** Delta mode and failed writers, over a real nats-server. */
describe('writer modes and failures', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 1 });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('runs in delta mode with Baton tools when no writing tool maps onto the agent tools, and says why', async () => {
    const bashOnly = AGENT_TOOLS.filter((t) => t.function.name === 'bash');
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: bashOnly });
    const sid = open.session_id;
    const started = h.client.waitForEvent(sid, (e) => e.type === 'writer.started', 20_000);
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    h.model.reset();
    await h.client.append(sid, conversation(4));
    const s = await started;
    expect(s.mode).toBe('delta');
    expect(s.reason).toMatch(/no writing tool/);
    expect(await settled).toMatchObject({ outcome: 'success' });
    const first = h.model.requests[0]?.body as { tools: { function: { name: string } }[]; messages: { role: string; content: unknown }[] };
    expect(first.tools.map((t) => t.function.name)).toEqual(['read', 'write', 'edit', 'apply_patch', 'glob', 'grep', 'task']);
    // Delta mode does not send the agent's system prompt.
    expect(first.messages[0]?.content).not.toBe(SYSTEM_PROMPT);
    const checkpoint = await readFile(open.memory.checkpoint, 'utf8');
    expect(checkpoint).toContain('## §11 Open notes');
  });

  it('leaves the watermark on a transient model failure and publishes a failed cache_perf', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS });
    const sid = open.session_id;
    h.model.reset();
    h.model.script({ error: { status: 503, message: 'overloaded' } });
    const perf = h.client.waitForEvent(sid, (e) => e.type === 'writer.cache_perf', 20_000);
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    await h.client.append(sid, conversation(4, { prefix: 'f' }));
    expect(await settled).toMatchObject({ outcome: 'failure', failure: { kind: 'transient', retryable: true }, watermark: null });
    expect(await perf).toMatchObject({ status: 'failed' });
    const status = await h.client.status(sid);
    expect(status.state.watermark).toBeNull();
    expect(status.state.writer).toBe('idle');
    // The next request starts a new writer (the extractive model answers again) and succeeds.
    const next = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    const reply = await h.client.checkpoint(sid);
    expect(reply.result).toBe('started');
    expect(await next).toMatchObject({ outcome: 'success' });
  });

  it('classifies auth failures as deterministic and answers queued for a second manual request', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, checkpoint: { thresholds: ['90%'] } });
    const sid = open.session_id;
    await h.client.append(sid, conversation(3, { prefix: 'q' }));
    h.model.reset();
    h.model.script({ delayMs: 300, then: { error: { status: 401, message: 'bad key' } } });
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    expect(await h.client.checkpoint(sid)).toMatchObject({ result: 'queued' });
    expect(await settled).toMatchObject({ outcome: 'failure', failure: { kind: 'auth', retryable: false } });
  });

  it('skips a manual request when checkpointing is disabled for the session', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, checkpoint: { enabled: false } });
    await h.client.append(open.session_id, conversation(2, { prefix: 'd' }));
    expect(await h.client.checkpoint(open.session_id)).toMatchObject({ result: 'skipped', reason: 'checkpoint disabled' });
  });

  it('close waits for the running writer, refuses a second close meanwhile, then resumes on open', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, checkpoint: { thresholds: ['95%'] } });
    const sid = open.session_id;
    await h.client.append(sid, conversation(2, { prefix: 'cl' }));
    // Writers of earlier tests must not take this test's scripted answer.
    await h.daemon.sessions.waitWritersIdle(20_000);
    h.model.reset();
    h.model.script({ delayMs: 400, then: { error: { status: 500, message: 'slow and failing' } } });
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    // One connection, one subject: the daemon takes the two closes in the order they were sent.
    const closing = h.client.close(sid);
    await expect(h.client.close(sid)).rejects.toMatchObject({ code: 'conflict' });
    await closing;
    expect(await settled).toMatchObject({ outcome: 'failure' });
    await expect(h.client.append(sid, conversation(1, { prefix: 'late' }))).rejects.toMatchObject({ code: 'conflict' });
    expect(await h.client.open({ session_id: sid, project_id: 'shop', model: MODEL })).toMatchObject({ resumed: true });
    expect((await h.client.append(sid, conversation(1, { prefix: 'again' }))).accepted).toBe(4);
  });
});
