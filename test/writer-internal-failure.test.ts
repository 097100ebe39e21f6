import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type PublishedEvent } from '@baton/protocol';
import { parseWriterPaths, type RecordedRequest } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

type Settled = Extract<PublishedEvent, { type: 'writer.settled' }>;
type Started = Extract<PublishedEvent, { type: 'writer.started' }>;

/** A promise the test resolves when it chooses. */
function gate(): { readonly wait: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** The extractive writer's first turn (read the three staged files), answered once `released` resolves. */
function gatedFirstTurn(reached: () => void, released: Promise<void>): (req: RecordedRequest) => Promise<{ reply: { tool_calls: { name: string; arguments: Record<string, string> }[] } }> {
  return async (req) => {
    const task = req.body.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).find((text) => parseWriterPaths(text) !== undefined);
    const paths = task === undefined ? undefined : parseWriterPaths(task);
    if (paths === undefined) throw new Error('no writer task in the request');
    reached();
    await released;
    const files = [paths.checkpoint, paths.memory, paths.notes].filter((p): p is string => p !== undefined);
    return { reply: { tool_calls: files.map((p) => ({ name: 'read_file', arguments: { file_path: p } })) } };
  };
}

/**
 * A writer whose executor fails still settles: the failure reaches the session as a logged `writer.settled`, the slot
 * is free for the next writer, and nothing of the failed writer stays staged. The failures are real: a model answer
 * the writer log refuses to record (its executor throws: `failure{internal}`), a history store that cannot be
 * written at commit time, and a staging tree removed under a running writer.
 */
describe('a writer whose effects fail settles', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 1 });
  });
  afterAll(async () => {
    await h.stop();
  });

  async function openWithConversation(prefix: string): Promise<{ sid: string; checkpoint: string }> {
    const open = await h.client.open({ project_id: `p-${prefix}`, model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    await h.client.append(open.session_id, conversation(3, { prefix }));
    await h.daemon.sessions.waitWritersIdle(30_000);
    h.model.reset();
    return { sid: open.session_id, checkpoint: open.memory.checkpoint };
  }

  /** Starts a writer with a checkpoint request; resolves with its start and (later) its settlement. */
  async function startWriter(sid: string): Promise<{ started: Started; settled: Promise<Settled> }> {
    const started = h.client.waitForEvent(sid, (e): e is Started => e.type === 'writer.started', 30_000);
    const settled = h.client.waitForEvent(sid, (e): e is Settled => e.type === 'writer.settled', 30_000);
    expect((await h.client.checkpoint(sid)).result).toBe('started');
    return { started: await started, settled };
  }

  /** The slot is free: a new request starts a writer, which succeeds against the extractive model. */
  async function expectSlotFree(sid: string, failed: string): Promise<void> {
    expect((await h.client.status(sid)).state.writer).toBe('idle');
    h.model.reset();
    const next = await startWriter(sid);
    expect(next.started.writer_id).not.toBe(failed);
    expect(await next.settled).toMatchObject({ outcome: 'success' });
  }

  function settledRecord(sid: string, writerId: string): unknown {
    return [...h.log.read(`session/${sid}`)].find((r) => r.type === 'writer.settled' && (r.payload as { writerId: string }).writerId === writerId)?.payload;
  }

  it('settles as failure{internal} when a model answer cannot be logged (the executor throws)', async () => {
    const { sid, checkpoint } = await openWithConversation('int');
    // An OpenAI-compatible server answering with a non-string finish_reason: the SDK passes it through, the writer
    // log's schema refuses the `model.replied` record, and the run's executor fails.
    h.model.script({ reply: { content: 'CHECKPOINT_COMPLETE', finish_reason: 7 as unknown as string } });
    const { started, settled } = await startWriter(sid);
    const done = await settled;
    expect(done).toMatchObject({ outcome: 'failure', failure: { kind: 'internal', retryable: false }, writer_id: started.writer_id });
    expect(settledRecord(sid, started.writer_id)).toMatchObject({ outcome: 'failure', failure: { kind: 'internal' } });
    expect((await h.client.status(sid)).last_outcome).toMatchObject({ writer_id: started.writer_id, outcome: 'failure', failure: { kind: 'internal' }, watermark: null });
    // The model.replied record was refused: nothing after writer.prepared in the writer's stream.
    expect([...h.log.read(`writer/${started.writer_id}`)].map((r) => r.type)).toEqual(['writer.started', 'writer.prepared']);
    expect(existsSync(join(h.dataDir, 'staging', started.writer_id))).toBe(false);
    expect(existsSync(checkpoint)).toBe(false);
    await expectSlotFree(sid, started.writer_id);
  });

  it('settles as failure{other} when the history store cannot be written at commit', async () => {
    const { sid, checkpoint } = await openWithConversation('hist');
    const history = join(h.dataDir, 'history');
    // A file where the history directory should be: every write under it fails (ENOTDIR), whoever runs the daemon.
    await rm(history, { recursive: true, force: true });
    await writeFile(history, 'not a directory');
    let failed = '';
    try {
      const { started, settled } = await startWriter(sid);
      failed = started.writer_id;
      const done = await settled;
      expect(done).toMatchObject({ outcome: 'failure', failure: { kind: 'other', retryable: false }, writer_id: started.writer_id });
      expect(settledRecord(sid, started.writer_id)).toMatchObject({ outcome: 'failure', failure: { kind: 'other', message: expect.stringMatching(/ENOTDIR|not a directory/) as unknown } });
      expect(existsSync(join(h.dataDir, 'staging', started.writer_id))).toBe(false);
      // The live tree was not touched: no checkpoint, no journaled commit of this writer.
      expect(existsSync(checkpoint)).toBe(false);
      expect([...h.log.read('memory/commits')].filter((r) => (r.payload as { writerId: string | null }).writerId === started.writer_id)).toEqual([]);
    } finally {
      await rm(history, { force: true });
    }
    await expectSlotFree(sid, failed);
    expect(await readFile(checkpoint, 'utf8')).toContain('## ');
  });

  it('settles when its staging tree is removed while its model call is pending', async () => {
    const { sid } = await openWithConversation('stage');
    const reached = gate();
    const release = gate();
    h.model.script(gatedFirstTurn(reached.open, release.wait));
    const { started, settled } = await startWriter(sid);
    await reached.wait;
    const staging = join(h.dataDir, 'staging', started.writer_id);
    expect(existsSync(staging)).toBe(true);
    await rm(staging, { recursive: true, force: true });
    release.open();
    // The staged files it reads are gone, so what it writes lacks the template's structure: validation fails through
    // every re-entry and the writer settles as a validation failure, its staging tree dropped.
    expect(await settled).toMatchObject({ writer_id: started.writer_id, outcome: 'failure', failure: { kind: 'validation' } });
    expect(existsSync(staging)).toBe(false);
    await expectSlotFree(sid, started.writer_id);
  });
});
