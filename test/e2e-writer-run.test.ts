import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadPrompt } from '@baton/memory-store';
import { type PublishedEvent } from '@baton/protocol';
import { parseWriterPaths, type ChatMessage, type RecordedRequest, type ScriptStep } from '@baton/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/** A request message's content as text: a string as it is, `''` when null or absent, an array of parts as JSON. */
function contentText(content: ChatMessage['content']): string {
  if (content === undefined || content === null) return '';
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/**
 * The writer inside its run (acceptance scenarios 21–30, 32), end to end over a real nats-server, with the
 * loopback model scripted to loop on empty output, call forbidden tools, write outside the tree and produce invalid
 * checkpoints. Unscripted turns fall through to the loopback's extractive writer.
 */
describe('writer run', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 1 });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(() => {
    h.model.reset();
  });

  const taskOf = (req: RecordedRequest): string => {
    const msg = req.body.messages.find((m) => typeof m.content === 'string' && m.content.includes('CHECKPOINT_PATH = '));
    return contentText(msg?.content);
  };
  const pathsOf = (req: RecordedRequest) => {
    const p = parseWriterPaths(taskOf(req));
    if (p === undefined) throw new Error('no writer task in the request');
    return p;
  };
  const lastUser = (req: RecordedRequest): string => contentText([...req.body.messages].reverse().find((m) => m.role === 'user')?.content);
  const lastTool = (req: RecordedRequest): string => contentText([...req.body.messages].reverse().find((m) => m.role === 'tool')?.content);
  const writeCall = (path: (req: RecordedRequest) => string, text: string): ScriptStep => (req) => ({
    reply: { tool_calls: [{ name: 'write_file', arguments: { file_path: path(req), text } }] },
  });

  /** Opens a session, appends a conversation and starts a writer manually; resolves with its settlement and events. */
  async function runWriter(prefix: string, beforeStart?: (sid: string, memory: { checkpoint: string; tasks_dir: string }) => Promise<void>) {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['95%'] } });
    const sid = open.session_id;
    await h.client.append(sid, conversation(3, { prefix }));
    await beforeStart?.(sid, open.memory);
    const events: PublishedEvent[] = [];
    const stream = h.client.events(sid);
    const collecting = (async () => {
      for await (const e of stream) events.push(e);
    })();
    const settled = h.client.waitForEvent(sid, (e) => e.type === 'writer.settled', 30_000);
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    const outcome = await settled;
    // The settlement reached the waiter; the stream's own copy may still be queued behind the events before it.
    while (!events.some((e) => e.type === 'writer.settled')) await new Promise((r) => setTimeout(r, 10));
    stream.stop();
    await collecting;
    return { sid, open, outcome, events, reentries: events.filter((e) => e.type === 'writer.reentered') };
  }

  it('scenario 21: the task names the four staged paths of the parent, the subagent progress block, the budget table and the stop instruction', async () => {
    const r = await runWriter('a', async (_sid, memory) => {
      await mkdir(join(memory.tasks_dir, 'T1'), { recursive: true });
      await writeFile(join(memory.tasks_dir, 'T1', 'progress.md'), '---\nwritten-at: 1700000000000\n---\n## §1 Task identity\nT1\n');
    });
    expect(r.outcome.outcome).toBe('success');
    const task = taskOf(h.model.requests[0]!);
    const paths = pathsOf(h.model.requests[0]!);
    expect(paths.checkpoint).toMatch(new RegExp(`/staging/${r.sid}-w1/sessions/${r.sid}/checkpoint\\.md$`));
    expect(paths.memory).toMatch(/\/projects\/shop\/MEMORY\.md$/);
    expect(paths.taskMemDir).toMatch(new RegExp(`/sessions/${r.sid}/tasks$`));
    expect(task).toContain('SUBAGENT PROGRESS');
    expect(task).toContain('T1 (NEW, written-at=1700000000000)');
    expect(task).toContain('Section budgets (~tokens):');
    expect(task.trimEnd().endsWith('CHECKPOINT_COMPLETE and call no tools.')).toBe(true);
  });

  it('scenario 22: an empty stop gets the checkpoint reminder, and the writer then finishes', async () => {
    h.model.script({ reply: { content: '' } });
    const r = await runWriter('b');
    expect(r.outcome.outcome).toBe('success');
    expect(lastUser(h.model.requests[1]!)).toContain('CHECKPOINT_COMPLETE');
    expect(lastUser(h.model.requests[1]!)).toContain('ended without any edit');
    expect(r.reentries).toHaveLength(1);
    expect(r.reentries[0]).toMatchObject({ kind: 'continuation', iteration: 1 });
  });

  it('scenario 23: three empty or reasoning-only stops fail the writer and leave the watermark', async () => {
    h.model.script({ reply: { content: '' } }, { reply: { content: null, reasoning: 'thinking…' } }, { reply: { content: '' } });
    const r = await runWriter('c');
    expect(r.outcome).toMatchObject({ outcome: 'failure', failure: { kind: 'other' }, watermark: null });
    expect(r.reentries.map((e) => (e as { kind: string }).kind)).toEqual(['continuation', 'continuation']);
    expect(h.model.requests).toHaveLength(3);
  });

  it('scenario 24: a forbidden tool completes with "Tool not permitted" listing the allowed tools; the agent tool schema is unchanged', async () => {
    h.model.script({ reply: { tool_calls: [{ name: 'bash', arguments: { command: 'rm -rf /' } }] } });
    const r = await runWriter('d');
    expect(r.outcome.outcome).toBe('success');
    const result = lastTool(h.model.requests[1]!);
    expect(result).toContain('bash');
    expect(result).toMatch(/not permitted/i);
    expect(result).toContain('read_file');
    expect(result).toContain('write_file');
    expect(JSON.stringify(h.model.requests[1]!.body.tools)).toBe(JSON.stringify(AGENT_TOOLS));
  });

  it('scenario 26 (fix): a template-conforming checkpoint passes on the first check; over budget gets EXTRACTION REQUIRED before structure errors', async () => {
    const clean = await runWriter('e');
    expect(clean.outcome.outcome).toBe('success');
    expect(clean.reentries).toHaveLength(0);
    h.model.reset();

    // Over budget AND a broken header: extraction is asked first.
    const template = loadPrompt('checkpoint-template');
    const huge = template.replace('## §11 Open notes', '## §11 Open notes (renamed)').replace(/(## §5 Current work\n_[^\n]*_\n)\n\(none yet\)/, `$1\n> "Fix it"\n\n${'The order service keeps a long running log line. '.repeat(400)}`);
    h.model.script(writeCall((req) => pathsOf(req).checkpoint, huge), { reply: { content: 'CHECKPOINT_COMPLETE' } });
    const over = await runWriter('f');
    const afterFirst = h.model.requests[2]!;
    expect(lastUser(afterFirst)).toContain('EXTRACTION REQUIRED');
    expect(over.reentries[0]).toMatchObject({ kind: 'extraction' });
    // The extractive writer keeps the renamed header it read, so the structure error outlives the extraction.
    expect(over.reentries.slice(1).map((e) => (e as { kind: string }).kind)).toContain('validation');
    expect(over.outcome).toMatchObject({ outcome: 'failure', failure: { kind: 'validation' } });
  });

  it('scenario 26 (fix): structural errors left after 3 re-entries quarantine the draft and fail with kind validation; live files stay', async () => {
    // Each attempt is another broken draft: the writer answers every reflection, in vain.
    const broken = (n: number): string => `# Session checkpoint\n\nnothing here (attempt ${n})\n`;
    const attempt = (n: number): ScriptStep[] => [writeCall((req) => pathsOf(req).checkpoint, broken(n)), { reply: { content: 'CHECKPOINT_COMPLETE' } }];
    h.model.script(...attempt(1), ...attempt(2), ...attempt(3), ...attempt(4));
    const r = await runWriter('g');
    expect(r.outcome).toMatchObject({ outcome: 'failure', failure: { kind: 'validation', retryable: false }, watermark: null });
    expect(r.reentries.map((e) => (e as { kind: string }).kind)).toEqual(['validation', 'validation', 'validation']);
    const reflection = lastUser(h.model.requests[2]!);
    expect(reflection).toContain(pathsOf(h.model.requests[0]!).checkpoint);
    expect(reflection).toContain(pathsOf(h.model.requests[0]!).memory);
    expect(await readFile(join(r.open.memory.checkpoint.replace(/checkpoint\.md$/, 'checkpoint.invalid.md')), 'utf8')).toBe(broken(4));
    // Nothing live was committed: the session never had a checkpoint.
    expect(existsSync(r.open.memory.checkpoint)).toBe(false);
  });

  it('a writer that leaves its draft as it was after a reflection is not reflected again: it fails at once, naming the rules', async () => {
    const broken = '# Session checkpoint\n\nnothing here\n';
    const attempt = (): ScriptStep[] => [writeCall((req) => pathsOf(req).checkpoint, broken), { reply: { content: 'CHECKPOINT_COMPLETE' } }];
    h.model.script(...attempt(), ...attempt(), ...attempt(), ...attempt());
    const r = await runWriter('g2');
    expect(r.outcome).toMatchObject({ outcome: 'failure', failure: { kind: 'validation', retryable: false }, watermark: null });
    // One reflection, the same draft again: two model turns of writing instead of four.
    expect(r.reentries.map((e) => (e as { kind: string }).kind)).toEqual(['validation']);
    expect(h.model.pending()).toBe(4);
    const settled = [...h.log.read(`writer/${r.sid}-w1`)].find((rec) => rec.type === 'validation.completed' && (rec.payload as { unchanged?: boolean }).unchanged === true);
    expect(settled?.payload).toMatchObject({ unchanged: true, rules: expect.arrayContaining(['checkpoint-section-missing']) as unknown });
    expect(await readFile(join(r.open.memory.checkpoint.replace(/checkpoint\.md$/, 'checkpoint.invalid.md')), 'utf8')).toBe(broken);
  });

  it('scenarios 28–30: writes outside the tree, through `..` or `//`, and into another session are refused and change nothing', async () => {
    const other = await h.client.open({ project_id: 'shop', model: MODEL });
    const outside = join(h.dataDir, 'outside.md');
    const targets = (req: RecordedRequest): string[] => {
      const cp = pathsOf(req).checkpoint;
      const root = cp.slice(0, cp.indexOf('/sessions/'));
      return [outside, `${root}/../secret.md`, `${root}//global/x.md`, `${root}/sessions/${other.session_id}/checkpoint.md`, `${root}/sessions/x/../../../escape.md`, '/etc/baton-test.md'];
    };
    h.model.script((req) => ({
      reply: { tool_calls: targets(req).map((file_path) => ({ name: 'write_file', arguments: { file_path, text: 'pwned' } })) },
    }));
    const r = await runWriter('h');
    expect(r.outcome.outcome).toBe('success');
    const sent = h.model.requests[1]!.body.messages;
    const taskAt = sent.findIndex((m) => typeof m.content === 'string' && m.content.includes('CHECKPOINT_PATH = '));
    const results = sent.slice(taskAt).filter((m) => m.role === 'tool').map((m) => contentText(m.content));
    expect(results).toHaveLength(6);
    for (const text of results) expect(text).toMatch(/^Error: Refused/);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync('/etc/baton-test.md')).toBe(false);
    expect(existsSync(other.memory.checkpoint)).toBe(false);
    // Refusals name the parent's own paths.
    expect(results[3]).toContain(`sessions/${r.sid}/checkpoint.md`);
  });

  it('scenario 32: with memory.disable_write no writer starts and a checkpoint request is skipped with the key named', async () => {
    const open = await h.client.open({ project_id: 'shop', model: MODEL, memory: { disable_write: true } });
    await h.client.append(open.session_id, conversation(2, { prefix: 'i' }));
    expect(await h.client.checkpoint(open.session_id)).toEqual({ ok: true, result: 'skipped', reason: 'memory.disable_write is true' });
    expect(h.model.requests).toHaveLength(0);
  });
});
