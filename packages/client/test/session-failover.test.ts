import { ProtocolError, decodeRequest, encodeReply } from '@baton/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatonClient } from '../src/baton-client.ts';
import { BatonRequestError } from '../src/baton-request-error.ts';
import { mayFailOver } from '../src/session-failover.ts';
import { MemoryTransport } from '../src/transport/memory-transport.ts';
import { TransportError } from '../src/transport/transport-error.ts';
import { startFakeDaemon } from './fake-daemon.ts';

const model = { id: 'gpt-4o', context_window: 128_000 };
const state = { tokens: 1, usable_window: 100, next_threshold: null, watermark: null, writer: 'idle', overflow: false };
const openReply = (sid: string, resumed: boolean): object => ({
  ok: true,
  session_id: sid,
  resumed,
  memory: { root: '/m', checkpoint: '/m/c', memory: '/m/M', notes: '/m/n', tasks_dir: '/m/t' },
  thresholds: [10],
  usable_window: 100,
});

let transport: MemoryTransport;
beforeEach(() => {
  transport = new MemoryTransport();
});
afterEach(async () => {
  await transport.close();
});

describe('mayFailOver', () => {
  it('repeats what reached no daemon or was refused unavailable, and what timed out only when safe to repeat', () => {
    expect(mayFailOver(new TransportError('no_responders', 'x'), false)).toBe(true);
    expect(mayFailOver(new TransportError('timeout', 'x'), true)).toBe(true);
    expect(mayFailOver(new TransportError('timeout', 'x'), false)).toBe(false);
    expect(mayFailOver(new TransportError('closed', 'x'), true)).toBe(false);
    expect(mayFailOver(new BatonRequestError('unavailable', 'x', 's'), false)).toBe(true);
    expect(mayFailOver(new BatonRequestError('not_found', 'x', 's'), true)).toBe(false);
    expect(mayFailOver(new Error('x'), true)).toBe(false);
  });
});

describe('BatonClient with failover', () => {
  it('opens a session again with the request it was opened with when its daemon is gone, then repeats the request', async () => {
    // The first "daemon" holds the session, then disappears; a second one answers `open` only after two refusals.
    const first = startFakeDaemon(transport, (subject) => (subject.endsWith('.open') ? openReply('s1', false) : { ok: true, accepted: 1, duplicates: 0, state }));
    const reopened: { attempts: number; cause: unknown }[] = [];
    const client = new BatonClient(transport, { failover: { timeoutMs: 5_000, delayMs: 1, onReopened: (e) => reopened.push(e) } });
    await client.open({ project_id: 'p', model, system: 'sys' });
    first.stop();
    let refusals = 0;
    let open = false;
    const second = startFakeDaemon(transport, (subject) => {
      if (!subject.endsWith('.open')) {
        return open ? { ok: true, accepted: 0, duplicates: 1, state } : new ProtocolError('unavailable', 'moved', { reason: 'moved' }).toReply();
      }
      if (refusals++ < 2) return new ProtocolError('unavailable', 'holder not stale yet').toReply();
      open = true;
      return openReply('s1', true);
    });
    const reply = await client.append('s1', [{ id: 'm1', role: 'user', content: 'hi' }]);
    expect(reply).toMatchObject({ ok: true, duplicates: 1 });
    expect(reopened).toHaveLength(1);
    expect(reopened[0]?.attempts).toBe(3);
    expect(reopened[0]?.cause).toBeInstanceOf(BatonRequestError);
    const opens = second.seen.filter((r) => r.subject === 'baton.v1.p.p.open').map((r) => r.body);
    expect(opens.at(-1)).toEqual({ project_id: 'p', model, system: 'sys', session_id: 's1' });
    second.stop();
  });

  it('gives up on a repeatable request its daemon took and never answered after attemptTimeoutMs, then repeats it', { timeout: 20_000 }, async () => {
    const first = startFakeDaemon(transport, () => openReply('s1', false));
    const reopened: { cause: unknown }[] = [];
    // A request timeout far above the test's own: only the attempt timeout can make this call return in time.
    const client = new BatonClient(transport, { timeoutMs: 120_000, failover: { timeoutMs: 60_000, attemptTimeoutMs: 200, delayMs: 1, onReopened: (e) => reopened.push(e) } });
    await client.open({ project_id: 'p', model, system: 'sys' });
    first.stop();
    // The holder takes the append and dies before answering (its subscription goes with it).
    // Another daemon comes up once the first one is gone.
    let taken = 0;
    let second: ReturnType<typeof startFakeDaemon> | undefined;
    const dying = transport.subscribe('baton.v1.p.p.session.s1.append', () => {
      taken++;
      dying.unsubscribe();
      setImmediate(() => {
        second = startFakeDaemon(transport, (subject) => (subject.endsWith('.open') ? openReply('s1', true) : { ok: true, accepted: 1, duplicates: 0, state }));
      });
    });
    const reply = await client.append('s1', [{ id: 'm1', role: 'user', content: 'hi' }]);
    expect(reply).toMatchObject({ ok: true, accepted: 1 });
    expect(taken).toBe(1);
    expect(reopened).toHaveLength(1);
    expect(reopened[0]?.cause).toMatchObject({ code: 'timeout' });
    // A request that is not safe to repeat keeps its own timeout and is not repeated after one.
    const silent = transport.subscribe('baton.v1.p.p.session.s1.checkpoint', () => {});
    second?.stop();
    await expect(client.checkpoint('s1', { timeoutMs: 300 })).rejects.toMatchObject({ code: 'timeout' });
    silent.unsubscribe();
  });

  it('gives up on an open a paused daemon holds after openAttemptTimeoutMs and tries again, with the id it chose for a new session', { timeout: 20_000 }, async () => {
    // Two daemons in the open queue group of project p, taken in turn: the first is paused (it takes requests and
    // never answers).
    const tries: { daemon: string; sessionId: unknown }[] = [];
    const paused = transport.subscribe('baton.v1.p.p.open', (msg) => tries.push({ daemon: 'paused', sessionId: (decodeRequest(msg.data, msg.headers).value as { session_id?: unknown }).session_id }), { queue: 'q' });
    const live = transport.subscribe(
      'baton.v1.p.p.open',
      (msg) => {
        const body = decodeRequest(msg.data, msg.headers).value as { session_id?: string };
        tries.push({ daemon: 'live', sessionId: body.session_id });
        msg.respond(encodeReply(openReply(body.session_id ?? 'daemon-chosen', false), 'msgpack'));
      },
      { queue: 'q' },
    );
    // A request timeout far above the test's own: only the open's attempt timeout can make the call return in time.
    const client = new BatonClient(transport, { timeoutMs: 120_000, failover: { timeoutMs: 60_000, openAttemptTimeoutMs: 100, delayMs: 1 } });
    const opened = await client.open({ project_id: 'p', model });
    // The first try reached the paused daemon; the next round (two tries) reached the live one too.
    expect(tries.map((t) => t.daemon).slice(0, 2)).toEqual(['paused', 'live']);
    expect(tries[0]?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(tries.map((t) => t.sessionId))).toEqual(new Set([tries[0]?.sessionId]));
    expect(opened.session_id).toBe(tries[0]?.sessionId);
    paused.unsubscribe();
    live.unsubscribe();
  });

  it('keeps waiting for an open try it sent another beside: a late answer still counts, and a new session is not "resumed"', { timeout: 20_000 }, async () => {
    // Tries every 100 ms, each may wait the request's own timeout (far above the test's).
    const client = new BatonClient(transport, { timeoutMs: 120_000, failover: { timeoutMs: 60_000, openAttemptTimeoutMs: 100, delayMs: 1 } });
    // A daemon that answers only the first try, after 300 ms (later tries are held unanswered): only that late answer
    // can end the call.
    const tries: string[] = [];
    const late = transport.subscribe('baton.v1.p.p.open', (msg) => {
      const body = decodeRequest(msg.data, msg.headers).value as { session_id: string };
      tries.push(body.session_id);
      if (tries.length === 1) setTimeout(() => msg.respond(encodeReply(openReply(body.session_id, false), 'msgpack')), 300);
    });
    const first = await client.open({ project_id: 'p', model });
    expect(tries.length).toBeGreaterThan(1);
    expect(new Set(tries)).toEqual(new Set([first.session_id]));
    late.unsubscribe();

    // The first try created the session and its answer is lost (a paused member took it); the second try is answered
    // "resumed": the caller still learns it has a new session.
    let n = 0;
    const resuming = transport.subscribe('baton.v1.p.p.open', (msg) => {
      const body = decodeRequest(msg.data, msg.headers).value as { session_id: string };
      if (n++ === 1) msg.respond(encodeReply(openReply(body.session_id, true), 'msgpack'));
    });
    const second = await client.open({ project_id: 'p', model });
    expect(n).toBeGreaterThanOrEqual(2);
    expect(second.resumed).toBe(false);
    resuming.unsubscribe();
  });

  it('names a new session itself, so an open try answered too late and the try after it open the same session', { timeout: 20_000 }, async () => {
    // No hedging: one try at a time, each given up on after the request timeout and followed by another. A daemon
    // that creates the session the request names (or one of its own choosing) and never answers the first try (its
    // answer lost, or too late): that try's session exists on the daemon all the same.
    const created: string[] = [];
    let n = 0;
    const slow = transport.subscribe('baton.v1.p.p.open', (msg) => {
      const body = decodeRequest(msg.data, msg.headers).value as { session_id?: string };
      const sid = body.session_id ?? `daemon-chosen-${++n}`;
      const resumed = created.includes(sid);
      if (!resumed) created.push(sid);
      if (created.length === 1 && !resumed) return;
      msg.respond(encodeReply(openReply(sid, resumed), 'msgpack'));
    });
    const client = new BatonClient(transport, { timeoutMs: 100, failover: { timeoutMs: 10_000, delayMs: 1 } });
    const opened = await client.open({ project_id: 'p', model });
    // Both tries named one session: the one the first try created is the one the client uses; nothing is left behind.
    expect(created).toEqual([opened.session_id]);
    expect(opened.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(opened.resumed).toBe(false);
    slow.unsubscribe();
  });

  it('throws as before without failover, and for sessions it did not open', async () => {
    const plain = new BatonClient(transport);
    await expect(plain.append('s9', [{ id: 'm1', role: 'user', content: 'hi' }])).rejects.toMatchObject({ code: 'no_responders' });
    const client = new BatonClient(transport, { failover: { timeoutMs: 5_000 } });
    await expect(client.status('never-opened')).rejects.toMatchObject({ code: 'no_responders' });
  });
});
