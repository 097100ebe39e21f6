import { fileURLToPath } from 'node:url';
import { BatonRequestError } from '@baton/client';
import type { Message } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/** Preloaded into the workers: a session input holding `ALLOCATE_WITHOUT_BOUND` makes its fold allocate without bound. */
const HOOK = fileURLToPath(new URL('./fixtures/fold-allocation-hook.mjs', import.meta.url));
const POISON = 'ALLOCATE_WITHOUT_BOUND';
const SESSIONS = 8;
/** Appends each other session makes once the runaway session is quarantined. */
const AFTER = 3;

function codeOf(err: unknown): string {
  if (err instanceof BatonRequestError) return err.code;
  throw err;
}

/**
 * A session whose fold allocates without bound (a real allocation in the worker thread, stopped by the worker's heap
 * limit: `ERR_WORKER_OUT_OF_MEMORY`) kills the thread that folds it, and would kill the next one when it is loaded
 * again from its log. Its calls were in flight on both dead threads (the second time alone), so it is quarantined:
 * its append is answered `unavailable` and then `quarantined`, never left hanging, and every later request of it gets
 * `quarantined`. The other sessions, on the same daemon and the same threads, keep appending (retrying the
 * `unavailable` of a death), lose nothing they were told was accepted, and replay.
 */
describe('a session whose fold allocates without bound', { timeout: 180_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ poolSize: 2, daemon: { workerExecArgv: ['--import', HOOK], workerResourceLimits: { maxOldGenerationSizeMb: 128 } } });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('is stopped by the heap limit and quarantined; every other session keeps serving', async () => {
    const { client, daemon, log } = h;
    const others: string[] = [];
    for (let i = 0; i < SESSIONS; i++) others.push((await client.open({ project_id: 'p-load', model: MODEL })).session_id);
    const runaway = (await client.open({ project_id: 'p-runaway', model: MODEL })).session_id;

    const acknowledged = new Map<string, Set<string>>(others.map((sid) => [sid, new Set()]));
    const refusals: string[] = [];
    let quarantined = false;
    let started = 0;
    let allStarted!: () => void;
    const appendingEverywhere = new Promise<void>((resolve) => (allStarted = resolve));
    const appending = Promise.all(
      others.map(async (sid, s) => {
        let after = 0;
        for (let i = 0; !quarantined || after < AFTER; i++) {
          const message: Message = { id: `s${s}-m${i}`, role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} of session ${s}` };
          for (;;) {
            try {
              await client.append(sid, [message]);
              break;
            } catch (err) {
              expect(codeOf(err)).toBe('unavailable');
              refusals.push((err as Error).message);
            }
          }
          acknowledged.get(sid)?.add(message.id);
          if (quarantined) after++;
          if (i === 0 && ++started === SESSIONS) allStarted();
        }
      }),
    );
    await appendingEverywhere;

    // The runaway append is logged, then its fold kills the thread; loaded again, it kills the next one.
    const answers: string[] = [];
    for (;;) {
      const code = await client.append(runaway, [{ id: 'runaway', role: 'user', content: `fold this: ${POISON}` }]).then(() => 'ok', codeOf);
      answers.push(code);
      if (code !== 'unavailable') break;
    }
    quarantined = true;
    expect(answers).toEqual(['unavailable', 'quarantined']);
    const later = await client.status(runaway).then(() => null, (err: unknown) => err);
    expect(later).toBeInstanceOf(BatonRequestError);
    expect(later).toMatchObject({ code: 'quarantined', message: expect.stringMatching(/worker threads that died .*memory/i) as unknown });
    expect(await client.append(runaway, [{ id: 'after', role: 'user', content: 'hello' }]).then(() => 'ok', codeOf)).toBe('quarantined');

    await appending;
    // Both deaths were the heap limit's, nothing else died, and the daemon serves on with a full pool.
    const status = daemon.runtimeStatus();
    expect(status.pool.worker_exits).toBe(2);
    expect(status.quarantined).toBe(1);
    expect(status.pool.workers?.every((w) => w.thread_id !== null)).toBe(true);
    for (const message of refusals) expect(message).toMatch(/worker thread/);

    // The runaway input stays in its log as it was; the others lost nothing acknowledged, serve and replay.
    expect([...log.read(`session/${runaway}`)].some((r) => r.type === 'messages.appended' && JSON.stringify(r.payload).includes(POISON))).toBe(true);
    await daemon.sessions.flushDecisions();
    for (const sid of others) {
      const logged = new Set([...log.read(`session/${sid}`)].flatMap((r) => (r.type === 'messages.appended' ? (r.payload as { messages: Message[] }).messages.map((m) => m.id) : [])));
      expect([...(acknowledged.get(sid) ?? [])].filter((id) => !logged.has(id))).toEqual([]);
      expect(acknowledged.get(sid)?.size).toBeGreaterThan(AFTER);
      expect((await client.status(sid)).state.writer).toBe('idle');
      expect(verifySession(log, sid).divergence).toBeNull();
    }
  });
});
