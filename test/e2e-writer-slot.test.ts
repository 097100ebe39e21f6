import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { type PublishedEvent } from '@baton/protocol';
import { type ChatMessage } from '@baton/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/** A request message's content as text: a string as it is, `''` when null or absent, an array of parts as JSON. */
function contentText(content: ChatMessage['content']): string {
  if (content === undefined || content === null) return '';
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/** Writer start, queue and settlement end to end (acceptance scenarios 10–16). */
describe('writer slot', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 2 });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(async () => {
    await h.daemon.sessions.waitWritersIdle(20_000);
    h.model.reset();
  });

  const openSession = async (extra: Record<string, unknown> = {}) =>
    await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['95%'] }, ...extra });

  function collect(sid: string) {
    const events: PublishedEvent[] = [];
    const stream = h.client.events(sid);
    const done = (async () => {
      for await (const e of stream) events.push(e);
    })();
    return { events, stop: async () => { stream.stop(); await done; } };
  }

  it('scenario 10: skips with a reason — checkpointing off, memory writes off, empty main slice, delta with nothing new', async () => {
    const off = await openSession({ checkpoint: { enabled: false } });
    expect(await h.client.checkpoint(off.session_id)).toMatchObject({ result: 'skipped', reason: 'checkpoint disabled' });
    const mem = await openSession({ memory: { disable_write: true } });
    expect(await h.client.checkpoint(mem.session_id)).toMatchObject({ result: 'skipped', reason: 'memory.disable_write is true' });
    const empty = await openSession();
    await h.client.append(empty.session_id, [{ id: 'sub1', role: 'user', content: 'subagent only', agent_id: 'explorer' }]);
    expect(await h.client.checkpoint(empty.session_id)).toMatchObject({ result: 'skipped', reason: 'main slice is empty' });
    const delta = await openSession({ checkpoint: { fork: false, thresholds: ['95%'] } });
    await h.client.append(delta.session_id, conversation(3, { prefix: 'dl' }));
    const settled = h.client.waitForEvent(delta.session_id, (e) => e.type === 'writer.settled', 20_000);
    expect((await h.client.checkpoint(delta.session_id)).result).toBe('started');
    expect(await settled).toMatchObject({ outcome: 'success' });
    expect(await h.client.checkpoint(delta.session_id)).toMatchObject({ result: 'skipped', reason: 'nothing new since the watermark' });
    // None of these created memory files.
    await expect(readFile(off.memory.checkpoint, 'utf8')).rejects.toThrow();
    await expect(readFile(mem.memory.checkpoint, 'utf8')).rejects.toThrow();
  });

  it('scenarios 13 and 15: requests while running queue (newest wins); exactly one writer follows; the watermark is the boundary frozen at start', async () => {
    const open = await openSession();
    const sid = open.session_id;
    await h.client.append(sid, conversation(3, { prefix: 'qa' }));
    const log = collect(sid);
    h.model.script({ delayMs: 500, then: { reply: { content: 'CHECKPOINT_COMPLETE' } } });
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    // More conversation arrives while writer 1 runs; then requests 2 and 3.
    await h.client.append(sid, conversation(2, { prefix: 'qb', start: 20_000 }));
    expect(await h.client.checkpoint(sid)).toMatchObject({ result: 'queued', reason: 'writer running' });
    expect(await h.client.checkpoint(sid)).toMatchObject({ result: 'queued', reason: 'replaced pending request' });
    const second = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled' && e.writer_id.endsWith('-w2'), 20_000);
    await second;
    await log.stop();
    const started = log.events.filter((e) => e.type === 'writer.started');
    const settled = log.events.filter((e) => e.type === 'writer.settled');
    expect(started.map((e) => e.trigger)).toEqual(['manual', 'pending']);
    expect(settled).toHaveLength(2);
    // Writer 1 covered what existed when it started, not the messages that arrived while it ran.
    expect(settled[0]).toMatchObject({ outcome: 'success', watermark: started[0]!.covers_up_to });
    expect(started[0]!.covers_up_to.startsWith('qb')).toBe(false);
    // The drained request was computed from the conversation at settlement time.
    expect(started[1]!.covers_up_to.startsWith('qb')).toBe(true);
    expect(settled[1]).toMatchObject({ outcome: 'success', watermark: started[1]!.covers_up_to });
  });

  it('scenario 12 (with staging): existing files are never overwritten by a writer that fails', async () => {
    const open = await openSession();
    await mkdir(open.memory.checkpoint.replace(/checkpoint\.md$/, ''), { recursive: true });
    await writeFile(open.memory.checkpoint, 'hand-written checkpoint');
    await writeFile(open.memory.notes, 'hand-written notes');
    await h.client.append(open.session_id, conversation(2, { prefix: 'ex' }));
    h.model.script((req) => ({ reply: { tool_calls: [{ name: 'write_file', arguments: { file_path: contentText(req.body.messages.at(-1)?.content).match(/CHECKPOINT_PATH = (\S+)/)?.[1] ?? '', text: 'half-done' } }] } }), { error: { status: 500, message: 'gone' } });
    const settled = h.client.waitForEvent(open.session_id, (e) => e.type === 'writer.settled', 20_000);
    expect((await h.client.checkpoint(open.session_id)).result).toBe('started');
    expect(await settled).toMatchObject({ outcome: 'failure', failure: { kind: 'transient' } });
    expect(await readFile(open.memory.checkpoint, 'utf8')).toBe('hand-written checkpoint');
    expect(await readFile(open.memory.notes, 'utf8')).toBe('hand-written notes');
  });
});
