import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { checkCheckpointStructure, loadPrompt } from '@baton/memory-store';
import { toProviderMessage, verifySession } from '@baton/runtime';
import { type PublishedEvent } from '@baton/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/**
 * The walking skeleton end to end over a real nats-server: open → append past a threshold → a writer runs in a
 * worker thread against the loopback model through the openai SDK → checkpoint.md → watermark.
 */
describe.each([1, 2])('checkpoint end to end with pool size %i', (poolSize) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('crosses a threshold, runs a fork-mode writer in a worker and advances the watermark', async () => {
    const open = await h.client.open({
      project_id: 'shop',
      model: MODEL,
      system: SYSTEM_PROMPT,
      tools: AGENT_TOOLS,
      writer_tools: WRITER_TOOLS,
    });
    expect(open.resumed).toBe(false);
    // 80 % (38 400) is above usable − reserve (48 000 − 13 000) and is clamped to 35 000.
    expect(open.thresholds).toEqual([9_600, 19_200, 28_800, 35_000]);
    const sid = open.session_id;
    const events: PublishedEvent[] = [];
    const stream = h.client.events(sid);
    const collecting = (async () => {
      for await (const e of stream) events.push(e);
    })();
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);

    const messages = conversation(4); // usage totals climb to 9 860 (prompt + completion): crosses 9 600 on the last answer
    const first = await h.client.append(sid, messages.slice(0, 12));
    expect(first.accepted).toBe(12);
    expect(first.state.writer).toBe('idle');
    const second = await h.client.append(sid, messages.slice(12));
    expect(second.state.writer).toBe('running');

    const done = await settled;
    expect(done).toMatchObject({ type: 'writer.settled', outcome: 'success' });
    stream.stop();
    await collecting;

    // Scenario 20 (fix): cache performance comes from the writer's own calls.
    const perf = events.find((e) => e.type === 'writer.cache_perf');
    expect(perf).toMatchObject({ status: 'completed', num_llm_calls: 3 });
    if (perf?.type !== 'writer.cache_perf') throw new Error('no cache_perf');
    expect(perf.cache_read_tokens).toBeGreaterThan(0);
    expect(perf.total_input_tokens).toBeGreaterThan(perf.cache_read_tokens);
    const types = events.map((e) => e.type);
    expect(types.indexOf('threshold.crossed')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('writer.started')).toBeGreaterThan(types.indexOf('threshold.crossed'));
    expect(types.indexOf('writer.settled')).toBeGreaterThan(types.indexOf('writer.started'));
    const started = events.find((e) => e.type === 'writer.started');
    if (started?.type !== 'writer.started') throw new Error('no writer.started');
    expect(started.mode).toBe('fork');
    expect(events.find((e) => e.type === 'threshold.crossed')).toMatchObject({ threshold: 9_600, tokens: 9_860 });

    // checkpoint.md holds all 11 sections of the template, filled from the conversation.
    const checkpoint = await readFile(open.memory.checkpoint, 'utf8');
    expect(checkCheckpointStructure(checkpoint, loadPrompt('checkpoint-template')).problems).toEqual([]);
    expect(checkpoint).toContain('> Fix the failing test');
    expect(checkpoint).toContain('src/orders/service-1.ts');

    const status = await h.client.status(sid);
    expect(status.state.watermark).toBe(started.covers_up_to);
    expect(status.state.writer).toBe('idle');
    expect(status.files.checkpoint).toMatchObject({ exists: true, version: 1 });
    expect(status.files.checkpoint.tokens).toBeGreaterThan(500);
    expect(status.last_outcome).toMatchObject({ outcome: 'success', watermark: started.covers_up_to });

    // The writer ran in a worker thread: every writer record carries a thread id other than this thread's.
    const writerRecords = [...h.log.read(`writer/${started.writer_id}`)];
    expect(writerRecords.length).toBeGreaterThan(3);
    const threads = new Set(writerRecords.map((r) => (r.payload as { thread: number }).thread));
    expect(threads.size).toBe(1);
    expect([...threads][0]).not.toBe(threadId);
    expect([...threads][0]).toBeGreaterThan(0);

    // Fork mode: the writer's first request starts with the agent's system, tools and main-slice messages up to the
    // boundary, byte for byte as the agent sent them.
    const req = h.model.requests[0];
    if (req === undefined) throw new Error('the model saw no request');
    const boundary = messages.findIndex((m) => m.id === started.covers_up_to);
    const agentPrefix = [{ role: 'system', content: SYSTEM_PROMPT }, ...messages.slice(0, boundary + 1).map(toProviderMessage)];
    const sent = JSON.parse(req.rawBody) as { messages: unknown[]; tools: unknown[] };
    expect(JSON.stringify(sent.messages.slice(0, agentPrefix.length))).toBe(JSON.stringify(agentPrefix));
    expect(JSON.stringify(sent.tools)).toBe(JSON.stringify(AGENT_TOOLS));
    const task = sent.messages[agentPrefix.length] as { role: string; content: string };
    expect(task.role).toBe('user');
    // The writer works on staged copies (`<data>/staging/<writer>/…`, same layout as the memory tree), committed to
    // the live files only when it succeeds.
    const staged = (live: string) => live.replace(`${h.dataDir}/memory/`, `${h.dataDir}/staging/${started.writer_id}/`);
    expect(task.content).toContain(`CHECKPOINT_PATH = ${staged(open.memory.checkpoint)}`);
    expect(task.content).toContain(`MEMORY_PATH = ${staged(open.memory.memory)}`);
    expect(task.content).toContain(`NOTES_PATH = ${staged(open.memory.notes)}`);
    expect(task.content).toContain(`TASK_MEM_DIR = ${staged(open.memory.tasks_dir)}`);
    // The commit is journaled with the file's hash, and the staging tree is gone.
    const commits = [...h.log.read('memory/commits')].map((r) => r.type);
    expect(commits).toEqual(['commit.prepared', 'commit.applied']);
    expect(existsSync(join(h.dataDir, 'staging', started.writer_id))).toBe(false);

    // Re-sending acknowledged messages is a no-op.
    const again = await h.client.append(sid, messages.slice(0, 5));
    expect(again).toMatchObject({ accepted: 0, duplicates: 5 });

    // `replay --verify`: re-folding the log through the machines reproduces every recorded decision and settlement.
    await h.daemon.sessions.flushDecisions();
    const verified = verifySession(h.log, sid);
    expect(verified.divergence).toBeNull();
    expect(verified.writers).toBe(1);
    expect(verified.decisions).toBeGreaterThanOrEqual(3);
  });
});
