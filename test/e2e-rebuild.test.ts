import { writeFile } from 'node:fs/promises';
import { type Message, type RebuildReply } from '@baton/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/** A message's content as text: a string as it is, an array of parts (or nothing) as JSON. */
function contentText(content: Message['content'] | undefined): string {
  return typeof content === 'string' ? content : JSON.stringify(content ?? null);
}

/** Rebuild scenarios over a real nats-server (acceptance scenarios 34–44 and their fixed variants). */
describe('rebuild', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 2 });
  });
  afterAll(async () => {
    await h.stop();
  });

  async function openSession(extra: Record<string, unknown> = {}): Promise<string> {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, ...extra });
    return open.session_id;
  }

  function expectValidSequence(context: readonly Message[]): void {
    const calls = new Set<string>();
    for (const m of context) {
      if (m.role === 'tool') expect(calls.has(String(m.tool_call_id))).toBe(true);
      for (const c of m.tool_calls ?? []) calls.add(String((c as { id: string }).id));
    }
  }

  it('scenarios 34 and 39: rebuilds from an existing checkpoint without a model call, keeps the tail and every later user message verbatim, recovers the usage once', async () => {
    // One rung, so the later messages start no second writer.
    const sid = await openSession({ checkpoint: { thresholds: ['20%'] } });
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    const messages = conversation(4);
    await h.client.append(sid, messages);
    expect(await settled).toMatchObject({ outcome: 'success' });
    const watermark = (await h.client.status(sid)).state.watermark;
    expect(watermark).not.toBeNull();
    const later = conversation(2, { prefix: 'n', start: 47_000, step: 1_000 });
    const appended = await h.client.append(sid, later);
    expect(appended.state.overflow).toBe(true);

    const calls = h.model.requests.length;
    const completed = h.client.waitForEvent(sid, (e) => e.type === 'rebuild.completed', 20_000);
    const reply: RebuildReply = await h.client.rebuild(sid, { reason: 'overflow' });
    expect(h.model.requests.length).toBe(calls);
    expect(reply.outcome).toBe('rebuilt');
    expect(reply.covered_up_to).toBe(watermark);
    expect(await completed).toMatchObject({ outcome: 'rebuilt', covered_up_to: watermark });
    const [boundary, ...tail] = reply.context;
    expect(boundary?.role).toBe('user');
    expect(boundary?.id.startsWith('baton-')).toBe(true);
    // Scenario 42: the sections come in the reference order.
    const text = contentText(boundary?.content);
    const order = ['## Tasks ledger', '## Session checkpoint', '## Recent user input (verbatim)', '## Project memory', '## Session notes'].map((h) => text.indexOf(h));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    expectValidSequence(reply.context);
    const all = [...messages, ...later];
    const wIdx = all.findIndex((m) => m.id === watermark);
    for (const m of all.slice(wIdx + 1)) {
      if (m.role === 'user') expect(tail.find((t) => t.id === m.id)?.content).toBe(m.content);
    }
    // Outputs of compactable tools in the tail are cleared; their calls stay visible.
    const toolInTail = tail.find((m) => m.role === 'tool');
    if (toolInTail !== undefined) expect(toolInTail.content).toBe('[Old tool result content cleared]');

    // One recovery per provider usage: the overflow is cleared until newer usage arrives; the ladder re-arms.
    const status = await h.client.status(sid);
    expect(status.state.overflow).toBe(false);
    expect(status.state.next_threshold).toBe(9_600);
    expect(status.state.tokens).toBe(appended.state.tokens);
  });

  it('scenarios 35 and 41: with no checkpoint a writer is started and awaited, then the context is rebuilt', async () => {
    const sid = await openSession({ checkpoint: { thresholds: ['95%'] } });
    await h.client.append(sid, conversation(3, { prefix: 'w' }));
    const started = h.client.waitForEvent(sid, (e) => e.type === 'writer.started', 20_000);
    const reply = await h.client.rebuild(sid, { reason: 'manual', wait_ms: 20_000 });
    expect(await started).toMatchObject({ trigger: 'rebuild' });
    expect(reply.outcome).toBe('rebuilt');
    expect(reply.context.length).toBeGreaterThan(1);
  });

  it('scenario 35 (failure): a failed writer falls back to compaction, extractive when the model is unreachable', async () => {
    const sid = await openSession({ checkpoint: { thresholds: ['95%'] } });
    await h.client.append(sid, conversation(3, { prefix: 'x' }));
    h.model.reset();
    // The writer's call and the summary call both fail.
    h.model.script({ error: { status: 401, message: 'bad key' } }, { error: { status: 500, message: 'down' } }, { error: { status: 500, message: 'down' } });
    const reply = await h.client.rebuild(sid, { reason: 'overflow', wait_ms: 20_000 });
    expect(reply.outcome).toBe('compacted');
    expect(reply.status_text).toMatch(/compacted/);
    expect(contentText(reply.context[0]?.content)).toContain('extractive');
    expect(contentText(reply.context[0]?.content)).toContain('Fix the failing test');
    expectValidSequence(reply.context);
    h.model.reset();
  });

  it('scenario 38: switches off give compaction with a notice naming the switch, without a writer', async () => {
    const off = await openSession({ checkpoint: { enabled: false } });
    await h.client.append(off, conversation(2, { prefix: 'o' }));
    const a = await h.client.rebuild(off, { reason: 'manual' });
    expect(a.outcome).toBe('checkpoint-off');
    expect(a.status_text).toMatch(/Checkpointing is off/);
    expect(a.context.length).toBeGreaterThan(0);
    const memOff = await openSession({ memory: { disable_write: true } });
    await h.client.append(memOff, conversation(2, { prefix: 'p' }));
    const b = await h.client.rebuild(memOff, { reason: 'manual' });
    expect(b.outcome).toBe('memory-write-off');
    expect(b.status_text).toMatch(/memory.disable_write/);
  });

  it('scenario 40 (fix): a second rebuild before a newer checkpoint keeps the previous tail and the pending user message', async () => {
    const sid = await openSession({ checkpoint: { thresholds: ['95%'] } });
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    await h.client.append(sid, conversation(3, { prefix: 'r' }));
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    expect(await settled).toMatchObject({ outcome: 'success' });
    const first = await h.client.rebuild(sid, { reason: 'manual' });
    expect(first.outcome).toBe('rebuilt');
    const more = conversation(2, { prefix: 's', start: 30_000 });
    const pending: Message = { id: 'pending-user', role: 'user', content: 'Now also add a test for the refund path, please.' };
    await h.client.append(sid, [...more, pending]);
    const second = await h.client.rebuild(sid, { reason: 'manual' });
    expect(second.outcome).toBe('rebuilt');
    expect(second.covered_up_to).toBe(first.covered_up_to);
    const ids = second.context.map((m) => m.id);
    for (const m of first.context.slice(1)) expect(ids).toContain(m.id);
    for (const m of more) expect(ids).toContain(m.id);
    expect(second.context.at(-1)).toMatchObject({ id: 'pending-user', content: pending.content });
    expect(ids.filter((id) => id.startsWith('baton-'))).toHaveLength(1);
  });

  it('scenarios 36 and 44: an in-flight writer is awaited (bounded) before rendering, and only this session\'s writer is listed', async () => {
    const sid = await openSession({ checkpoint: { thresholds: ['20%'] } });
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 20_000);
    await h.client.append(sid, conversation(4, { prefix: 'y' }));
    expect(await settled).toMatchObject({ outcome: 'success' });
    // Another session's writer stalls: it must not appear in this session's rebuilt context.
    const other = await openSession({ checkpoint: { thresholds: ['95%'] } });
    await h.client.append(other, conversation(2, { prefix: 'z' }));
    h.model.reset();
    h.model.script({ stall: true }, { delayMs: 300, then: { reply: { content: 'CHECKPOINT_COMPLETE' } } });
    expect((await h.client.checkpoint(other)).result).toBe('started');
    // This session's own second writer is slow: the rebuild waits for it (status "Preparing conversation context…").
    await h.client.append(sid, conversation(1, { prefix: 'yy', start: 40_000 }));
    const status = h.client.waitForEvent(sid, (e) => e.type === 'status' && e.text.startsWith('Preparing'), 20_000);
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    const reply = await h.client.rebuild(sid, { reason: 'manual' });
    await status;
    expect(reply.outcome).toBe('rebuilt');
    const text = contentText(reply.context[0]?.content);
    expect(text).not.toContain(`${other}-w1`);
    h.model.reset();
  });

  it('scenario 37: a usable checkpoint that cannot be rendered reports insert-failed and never compacts', async () => {
    const own = await startHarness({ poolSize: 1, daemon: { rebuildCaps: { recent_user: 0 } } });
    try {
      const open = await own.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['20%'] } });
      const settled = own.client.waitForEvent(open.session_id, (e) => e.type === 'writer.settled', 20_000);
      await own.client.append(open.session_id, conversation(4, { prefix: 'v' }));
      expect(await settled).toMatchObject({ outcome: 'success' });
      // The files exist but hold nothing to render (and recent user input is switched off).
      await writeFile(open.memory.checkpoint, '');
      await writeFile(open.memory.memory, '');
      own.model.reset();
      const reply = await own.client.rebuild(open.session_id, { reason: 'manual' });
      expect(reply).toMatchObject({ outcome: 'insert-failed', context: [] });
      expect(reply.status_text).toMatch(/could not be rebuilt/);
      expect(own.model.requests).toHaveLength(0);
    } finally {
      await own.stop();
    }
  });
});
