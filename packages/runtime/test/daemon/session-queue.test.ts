import { ProtocolError } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { SessionQueue } from '../../src/daemon/session-queue.ts';
import type { Clock } from '../../src/time/clock.ts';

/** A clock whose time the test sets; the queue starts no timers. */
function clockAt(start: number): Clock & { t: number } {
  return {
    t: start,
    now() {
      return this.t;
    },
    setTimeout: () => ({ id: null }),
    clearTimeout: () => {},
  };
}

function held(): { readonly wait: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

async function reason(p: Promise<unknown>): Promise<unknown> {
  return await p.then(
    () => 'ok',
    (err: unknown) => (err instanceof ProtocolError ? `${err.code}:${String((err.details as { reason?: unknown }).reason)}` : err),
  );
}

describe('SessionQueue admission', () => {
  it('refuses requests past the per-session and daemon bounds at once, never internal work, and counts them out when done', async () => {
    const queue = new SessionQueue<string>(clockAt(0), { perSession: 2, total: 3, waitMs: 1_000 });
    const gate = held();
    const a1 = queue.request('a', () => gate.wait);
    const a2 = queue.request('a', () => Promise.resolve());
    expect(await reason(queue.request('a', () => Promise.resolve()))).toBe('unavailable:overloaded');
    const b1 = queue.request('b', () => Promise.resolve());
    expect(await reason(queue.request('c', () => Promise.resolve()))).toBe('unavailable:overloaded');
    // Internal work is never refused.
    const internal = queue.run('a', () => Promise.resolve('internal'));
    gate.open();
    await Promise.all([a1, a2, b1, internal]);
    expect(queue.queuedRequests).toBe(0);
    expect(await reason(queue.request('a', () => Promise.resolve()))).toBe('ok');
  });

  it('answers a request whose turn comes after waitMs unavailable (timeout) without running it', async () => {
    const clock = clockAt(0);
    const queue = new SessionQueue<string>(clock, { perSession: 8, total: 8, waitMs: 1_000 });
    const gate = held();
    const started = held();
    const first = queue.request('a', () => {
      started.open();
      return gate.wait;
    });
    let ran = false;
    const late = reason(
      queue.request('a', () => {
        ran = true;
        return Promise.resolve();
      }),
    );
    await started.wait;
    clock.t = 1_001;
    gate.open();
    await first;
    expect(await late).toBe('unavailable:timeout');
    expect(ran).toBe(false);
  });

  it('lets no request follow an append when the queues would refuse it', async () => {
    const queue = new SessionQueue<string>(clockAt(0), { perSession: 1, total: 8, waitMs: 1_000 });
    const gate = held();
    const append = queue.runAppend('a', async (logged) => {
      await gate.wait;
      logged('session');
    });
    expect(queue.followAppend('a')).toBeNull();
    gate.open();
    await append;
  });
});
