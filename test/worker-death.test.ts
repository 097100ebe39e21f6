import { BroadcastChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { BatonRequestError } from '@baton/client';
import type { Message, PublishedEvent } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import { parseWriterPaths, type RecordedRequest } from '@baton/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

type Settled = Extract<PublishedEvent, { type: 'writer.settled' }>;
type Started = Extract<PublishedEvent, { type: 'writer.started' }>;

const HOOK = fileURLToPath(new URL('./fixtures/worker-fault-hook.mjs', import.meta.url));

/** What `worker-fault-hook.mjs` is told: which thread, and how it ends. */
interface WorkerFault {
  readonly threadId: number;
  readonly fault: 'exit' | 'allocate';
  readonly code?: number;
}
const SESSIONS = 20;
const APPENDS = 8;

function gate(): { readonly wait: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** A writer's first turn (read its three staged files), held until `released`; `reached` is told its session. */
function heldFirstTurn(reached: (sessionId: string) => void, released: Promise<void>) {
  return async (req: RecordedRequest) => {
    const task = req.body.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).find((text) => parseWriterPaths(text) !== undefined);
    const paths = task === undefined ? undefined : parseWriterPaths(task);
    if (paths === undefined) throw new Error('no writer task in the request');
    reached(/sessions\/([^/]+)\//.exec(paths.checkpoint)?.[1] ?? '');
    await released;
    const files = [paths.checkpoint, paths.memory, paths.notes].filter((p): p is string => p !== undefined);
    return { reply: { tool_calls: files.map((p) => ({ name: 'read_file', arguments: { file_path: p } })) } };
  };
}

/**
 * A worker thread dies under load — from inside (`process.exit`, as a native abort or a tool would), from outside
 * (`Worker.terminate()`), or stopped by its heap limit while allocating without bound — while 20 sessions append
 * and 2 writers run. Every request is answered, `ok` or `unavailable`; retried, every append is acknowledged and in
 * the log; the writer that ran on the dead thread settles `failure{internal}` naming the exit and its session writes
 * again; the other thread's writer is untouched; every session replays.
 */
describe('a worker thread that dies', { timeout: 180_000 }, () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    h = null;
  });

  it('says at once that its worker threads cannot start, answers requests unavailable naming why, and stops', async () => {
    const harness = await startHarness({ poolSize: 2, daemon: { workerExecArgv: ['--import', '/nonexistent/baton-no-such-preload.mjs'] } });
    h = harness;
    const failure = await harness.daemon.failed();
    expect(failure).toMatchObject({ code: 'unavailable', details: { reason: 'workers_failed' }, message: expect.stringMatching(/worker threads cannot start \(.*baton-no-such-preload/) as unknown });
    const status = harness.daemon.runtimeStatus();
    expect(status.pool.workers?.map((w) => w.thread_id)).toEqual([null, null]);
    expect(status).toMatchObject({ serving: false, not_serving: { reason: 'workers_failed' } });
    // Not replaced over and over: Piscina starts no thread after one failed while starting, and neither does the pool.
    expect(status.pool.worker_exits).toBeLessThanOrEqual(2);
    // A request is answered, not left waiting for a thread that never comes.
    await expect(harness.client.open({ project_id: 'p', model: MODEL })).rejects.toMatchObject({ code: 'unavailable', details: { reason: 'workers_failed' } });
    h = null;
    await harness.stop();
  });

  it.each(['exit', 'terminate', 'allocate'] as const)('is survived: killed by %s while sessions append and writers run', async (how) => {
    const harness = await startHarness({
      poolSize: 2,
      // the writers' first model calls are held until the dead thread's work is done, which takes a while under load
      modelTimeoutMs: 150_000,
      daemon: { workerExecArgv: ['--import', HOOK], workerResourceLimits: { maxOldGenerationSizeMb: 256 } },
    });
    h = harness;
    const { client, daemon, log, model } = harness;

    // Two sessions with a writer each, held in their first model call.
    const writerSessions: string[] = [];
    for (const prefix of ['wa', 'wb']) {
      const open = await client.open({ project_id: `p-${prefix}`, model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
      await client.append(open.session_id, conversation(3, { prefix }));
      writerSessions.push(open.session_id);
    }
    await daemon.sessions.waitWritersIdle(60_000);
    model.reset();
    const release = gate();
    const reached = new Set<string>();
    const bothReached = gate();
    const onReach = (sid: string): void => {
      reached.add(sid);
      if (reached.size === 2) bothReached.open();
    };
    model.script(heldFirstTurn(onReach, release.wait), heldFirstTurn(onReach, release.wait));
    const writers = await Promise.all(
      writerSessions.map(async (sid) => {
        const started = client.waitForEvent(sid, (e): e is Started => e.type === 'writer.started', 60_000);
        const settled = client.waitForEvent(sid, (e): e is Settled => e.type === 'writer.settled', 120_000);
        expect((await client.checkpoint(sid)).result).toBe('started');
        return { sid, started: await started, settled };
      }),
    );
    await bothReached.wait;
    const threadOf = (writerId: string): number => ([...log.read(`writer/${writerId}`)][0]?.payload as { thread: number }).thread;

    // The thread to kill: the one the first writer runs on.
    const victim = threadOf(writers[0]?.started.writer_id ?? '');
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) sessions.push((await client.open({ project_id: 'p-load', model: MODEL })).session_id);

    const acknowledged = new Map<string, Set<string>>(sessions.map((sid) => [sid, new Set()]));
    const unavailable: string[] = [];
    let answered = 0;
    const killAt = gate();
    /** Appends `messages`, again after each `unavailable`, until it is acknowledged; any other answer fails. */
    const appendUntilAcknowledged = async (sid: string, messages: Message[]): Promise<void> => {
      for (;;) {
        try {
          await client.append(sid, messages);
          for (const m of messages) acknowledged.get(sid)?.add(m.id);
          if (++answered === SESSIONS * 2) killAt.open();
          return;
        } catch (err) {
          if (!(err instanceof BatonRequestError) || err.code !== 'unavailable') throw err;
          unavailable.push(err.message);
        }
      }
    };
    let dead = false;
    // Each session appends until the thread is dead and it has made at least APPENDS appends.
    const appending = Promise.all(
      sessions.map(async (sid, s) => {
        for (let i = 0; !dead || i < APPENDS; i++) await appendUntilAcknowledged(sid, [{ id: `s${s}-m${i}`, role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} of session ${s}` }]);
      }),
    );
    await killAt.wait;
    const threads = daemon.workerThreads;
    const worker = threads.find((w) => w.threadId === victim);
    if (worker === undefined) throw new Error(`no worker thread ${victim}`);
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    if (how === 'terminate') await worker.terminate();
    else {
      const channel = new BroadcastChannel('baton-test-worker-fault');
      channel.postMessage({ threadId: victim, fault: how, code: 70 } satisfies WorkerFault);
      channel.close();
    }
    const exitCode = await exited;
    dead = true;
    await appending;

    // The writer on the dead thread settled as Baton's own failure, naming the exit; the other one is released.
    release.open();
    for (const w of writers) {
      const settled = await w.settled;
      if (threadOf(w.started.writer_id) === victim) {
        expect(settled).toMatchObject({ writer_id: w.started.writer_id, outcome: 'failure', failure: { kind: 'internal', retryable: true } });
        const record = [...log.read(`session/${w.sid}`)].find((r) => r.type === 'writer.settled' && (r.payload as { writerId: string }).writerId === w.started.writer_id);
        expect((record?.payload as { failure: { message: string } }).failure.message).toMatch(how === 'allocate' ? /worker thread .*exited: .*memory/i : new RegExp(`worker thread .*exited: worker exited with code: ${exitCode}`));
      } else {
        expect(settled).toMatchObject({ writer_id: w.started.writer_id, outcome: 'success' });
      }
    }
    // Their sessions write again.
    for (const w of writers) {
      expect((await client.status(w.sid)).state.writer).toBe('idle');
      const next = client.waitForEvent(w.sid, (e): e is Settled => e.type === 'writer.settled', 120_000);
      expect((await client.checkpoint(w.sid)).result).toBe('started');
      expect(await next).toMatchObject({ outcome: 'success' });
    }
    expect(daemon.workerThreads.map((t) => t.threadId)).not.toContain(victim);
    expect(daemon.workerThreads).toHaveLength(2);
    expect(daemon.runtimeStatus().pool.worker_exits).toBe(1);

    // Every acknowledged message is in its session's log; every session serves and replays.
    for (const sid of sessions) {
      const logged = new Set([...log.read(`session/${sid}`)].flatMap((r) => (r.type === 'messages.appended' ? (r.payload as { messages: Message[] }).messages.map((m) => m.id) : [])));
      expect([...(acknowledged.get(sid) ?? [])].filter((id) => !logged.has(id))).toEqual([]);
      expect(acknowledged.get(sid)?.size).toBeGreaterThanOrEqual(APPENDS);
      expect((await client.status(sid)).state.writer).toBe('idle');
    }
    await daemon.sessions.flushDecisions();
    for (const sid of [...sessions, ...writerSessions]) expect(verifySession(log, sid).divergence).toBeNull();
    // The refusals named the worker (the requests in flight on it, and those for its sessions until reloaded).
    for (const message of unavailable) expect(message).toMatch(/worker thread/);
  });
});
