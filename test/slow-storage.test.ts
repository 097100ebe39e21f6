import { BatonRequestError } from '@baton/client';
import type { Message } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';
import { ManualClock } from './support/manual-clock.ts';
import { SlowCommitLog } from './support/slow-commit-log.ts';

const PER_SESSION = 4;
const TOTAL = 6;

function message(id: string): Message {
  return { id, role: 'user', content: `message ${id}` };
}

/** What a request was answered: `ok`, or its error code and reason. */
function outcome(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (err: unknown) => {
      if (!(err instanceof BatonRequestError)) throw err;
      return `${err.code}:${String((err.details as { reason?: unknown } | undefined)?.reason)}`;
    },
  );
}

/** Resolves once `condition` holds, checked each turn of the event loop (a state change, not a span of time). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise<void>((resolve) => setImmediate(resolve));
}

function messageIds(h: Harness, sessionId: string): string[] {
  return [...h.log.read(`session/${sessionId}`)].flatMap((r) => (r.type === 'messages.appended' ? (r.payload as { messages: Message[] }).messages.map((m) => m.id) : []));
}

/**
 * Slow storage, injected at the event-log port (`SlowCommitLog` over the real LMDB log): commits that do not return
 * for as long as the test holds them. Answers wait for them, in order, and nothing acknowledged is lost; meanwhile a
 * session takes at most `perSession` requests and the daemon `total`, and the rest are answered `unavailable`
 * (`overloaded`) at once; a request whose turn comes after `waits.queueMs` is answered `unavailable` (`timeout`)
 * and not run.
 */
describe('slow storage', { timeout: 60_000 }, () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.stop();
    h = null;
  });

  it('delays answers without reordering or losing them, and refuses what does not fit the queues at once', async () => {
    let slow!: SlowCommitLog;
    const harness = await startHarness({
      daemon: { requestQueue: { perSession: PER_SESSION, total: TOTAL } },
      wrapLog: (log) => (slow = new SlowCommitLog(log)),
    });
    h = harness;
    const { client } = harness;
    const s = (await client.open({ project_id: 'p', model: MODEL })).session_id;
    const t = (await client.open({ project_id: 'p', model: MODEL })).session_id;
    await client.append(s, [message('s-first')]);
    const committed = harness.log.lastSeq(`session/${s}`);

    slow.hold();
    // Six appends to one session, in order on one connection: the first waits for its commit, three queue behind it,
    // and the two past the session's bound are refused while the commit is still held.
    const sAppends = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'].map((id) => outcome(client.append(s, [message(id)])));
    expect(await Promise.all(sAppends.slice(PER_SESSION))).toEqual(['unavailable:overloaded', 'unavailable:overloaded']);
    // Two more requests fit the daemon's cap (another session), the third does not.
    const tAppends = ['t0', 't1', 't2'].map((id) => outcome(client.append(t, [message(id)])));
    expect(await tAppends[2]).toBe('unavailable:overloaded');
    await slow.whenHeld(2);
    // Nothing of the held appends is committed, so nothing of them was acknowledged.
    expect(harness.log.lastSeq(`session/${s}`)).toBe(committed);

    slow.release();
    expect(await Promise.all(sAppends.slice(0, PER_SESSION))).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(await Promise.all(tAppends.slice(0, 2))).toEqual(['ok', 'ok']);
    expect(messageIds(harness, s)).toEqual(['s-first', 'a0', 'a1', 'a2', 'a3']);
    expect(messageIds(harness, t)).toEqual(['t0', 't1']);

    // The refused appends were refused, not lost: sent again, they are taken.
    expect((await client.append(s, [message('a4'), message('a5')])).accepted).toBe(2);
    await harness.daemon.sessions.flushDecisions();
    for (const sid of [s, t]) expect(verifySession(harness.log, sid).divergence).toBeNull();
  });

  it('answers a request that waited longer than waits.queueMs for its turn unavailable (timeout) and does not run it', async () => {
    let slow!: SlowCommitLog;
    const clock = new ManualClock();
    const harness = await startHarness({
      daemon: { clock, waits: { queueMs: 1_000 } },
      wrapLog: (log) => (slow = new SlowCommitLog(log)),
    });
    h = harness;
    const { client } = harness;
    const s = (await client.open({ project_id: 'p', model: MODEL })).session_id;

    slow.hold();
    const first = outcome(client.append(s, [message('b0')]));
    await slow.whenHeld(1);
    const second = outcome(client.append(s, [message('b1')]));
    // Once the daemon has taken it into the session's queue, behind the held commit, its wait outlasts queueMs.
    await until(() => harness.daemon.sessions.queuedRequests === 2);
    clock.advance(2_000);
    slow.release();
    expect(await first).toBe('ok');
    expect(await second).toBe('unavailable:timeout');
    expect(messageIds(harness, s)).toEqual(['b0']);
    expect((await client.append(s, [message('b2')])).accepted).toBe(1);
    expect(messageIds(harness, s)).toEqual(['b0', 'b2']);
  });
});
