import { describe, expect, it } from 'vitest';
import { indexEntries } from '../../src/index-list.ts';
import { deltaStartIndex, type MessageIndexEntry } from '../../src/boundary.ts';
import {
  BASE_INPUT,
  CANCELLED,
  FAILURES,
  PREPARED,
  SessionDriver,
  TRANSIENT,
  WriterDriver,
  kinds,
  published,
  reply,
  starts,
  timerStarts,
  verdict,
  COMMITTED,
} from './drivers.ts';

/**
 * Acceptance scenarios of writer start, queue and settlement (10–20) and the fork:false delta (47).
 * File, child-session and SDK halves of these scenarios are I/O and belong to the runtime's integration tests.
 */
describe('writer slot and settlement scenarios', () => {
  it('scenario 10: skipped — checkpointing off, memory writes off, empty main slice, nothing new since the watermark (delta)', () => {
    const off = new SessionDriver({ ...BASE_INPUT, checkpointEnabled: false });
    off.turn(5_000);
    const a = off.checkpoint();
    expect(a).toMatchObject({ result: 'skipped', reason: 'checkpoint disabled' });
    expect(kinds(a.effects)).toEqual(['reply']);

    const noWrite = new SessionDriver({ ...BASE_INPUT, memoryWriteDisabled: true });
    noWrite.turn(5_000);
    const b = noWrite.checkpoint();
    expect(b).toMatchObject({ result: 'skipped', reason: 'memory.disable_write is true' });
    expect(kinds(b.effects)).toEqual(['reply']);

    const empty = new SessionDriver();
    empty.turn(5_000, false); // only a subagent slice
    const c = empty.checkpoint();
    expect(c).toMatchObject({ result: 'skipped', reason: 'main slice is empty' });
    expect(kinds(c.effects)).toEqual(['reply']);

    const delta = new SessionDriver({ ...BASE_INPUT, fork: false, forkUnavailableReason: 'no writing tool could be mapped' });
    delta.turn(5_000);
    expect(delta.checkpoint().result).toBe('started');
    delta.settle('success');
    expect(delta.ctx.watermark).not.toBeNull();
    const d = delta.checkpoint();
    expect(d).toMatchObject({ result: 'skipped', reason: 'nothing new since the watermark' });
    expect(kinds(d.effects)).toEqual(['reply']);
  });

  it('scenario 11 (machine half): the first start claims the slot, freezes the boundary and announces the writer', () => {
    const s = new SessionDriver();
    s.turn(5_000);
    const r = s.checkpoint();
    expect(r.result).toBe('started');
    const [start] = starts(r.effects);
    expect(start).toEqual({ kind: 'writer.start', writerId: 's1-w1', boundary: 'm1', mode: 'fork', deltaFrom: null, trigger: 'manual', watermark: null });
    expect(published(r.effects, 'writer.started')).toEqual([{ type: 'writer.started', writer_id: 's1-w1', covers_up_to: 'm1', mode: 'fork', trigger: 'manual' }]);
    expect(published(r.effects, 'status')).toEqual([{ type: 'status', text: 'Writing checkpoint…' }]);
    expect(s.value).toEqual({ slot: 'running', rebuild: 'idle', lifecycle: 'active' });
    // Fork mode unavailable: delta mode, and writer.started says why.
    const d = new SessionDriver({ ...BASE_INPUT, fork: false, forkUnavailableReason: 'no writing tool could be mapped' });
    d.turn(5_000);
    expect(published(d.checkpoint().effects, 'writer.started')[0]).toMatchObject({ mode: 'delta', reason: 'no writing tool could be mapped' });
  });

  for (const outcome of ['success', 'failure'] as const) {
    it(`scenario 13: single-slot queue — #2 and #3 queued, #2 dropped, one writer from #3 at settlement (${outcome})`, () => {
      const s = new SessionDriver();
      s.turn(5_000);
      expect(s.checkpoint('r1').result).toBe('started');
      s.turn(6_000);
      const two = s.checkpoint('r2');
      expect(two).toMatchObject({ result: 'queued', reason: 'writer running' });
      s.turn(7_000);
      const three = s.checkpoint('r3');
      expect(three).toMatchObject({ result: 'queued', reason: 'replaced pending request' });
      expect(s.value.slot).toBe('runningPending');
      // The conversation grows after #3; the drained writer covers it as it is at settlement.
      s.turn(8_000);
      const newest = indexEntries(s.ctx.index).at(-2)?.id;
      const settled = outcome === 'success' ? s.settle('success') : s.settle('failure', FAILURES.auth);
      const next = starts(settled);
      expect(next).toHaveLength(1);
      expect(next[0]).toMatchObject({ writerId: 's1-w2', boundary: newest, trigger: 'pending' });
      expect(s.ctx.pending).toBeNull();
      expect(s.value.slot).toBe('running');
      expect(starts(s.effects)).toHaveLength(2);
    });
  }

  it('scenario 14: atomic slot claim — the deciding transition claims the slot, a second request can never start a second writer', () => {
    const s = new SessionDriver();
    s.append(s.user(), s.assistant(45_000)); // two rungs: a start and a queued request in one transition
    expect(s.ctx.writer?.writerId).toBe(starts(s.effects)[0]?.writerId);
    expect(s.checkpoint().result).toBe('queued');
    expect(s.checkpoint().result).toBe('queued');
    // The settlement that drains the queue claims the slot in the same transition again.
    s.settle('success');
    expect(s.ctx.writer?.writerId).toBe('s1-w2');
    expect(s.checkpoint().result).toBe('queued');
    expect(starts(s.effects).map((e) => e.writerId)).toEqual(['s1-w1', 's1-w2']);
  });

  it('scenario 15: success advances the watermark to the boundary frozen at start, not to the newest message', () => {
    const s = new SessionDriver();
    s.turn(5_000);
    const boundary = starts(s.checkpoint().effects)[0]?.boundary;
    expect(boundary).toBe('m1');
    s.turn(6_000);
    s.turn(7_000);
    const effects = s.settle('success');
    expect(s.ctx.watermark).toBe('m1');
    expect(published(effects, 'writer.settled')).toEqual([{ type: 'writer.settled', writer_id: 's1-w1', outcome: 'success', watermark: 'm1' }]);
  });

  it('scenario 16: failure or cancellation leaves the watermark, frees the slot, reports the failure, and the next request starts a writer', () => {
    const cases = [['failure', TRANSIENT], ['failure', FAILURES.overflow], ['failure', FAILURES.auth], ['failure', FAILURES.other], ['cancelled', CANCELLED]] as const;
    for (const [outcome, failure] of cases) {
      const s = new SessionDriver();
      s.turn(5_000);
      s.checkpoint();
      s.settle('success');
      const before = s.ctx.watermark;
      s.turn(6_000);
      s.checkpoint();
      const effects = s.settle(outcome, failure);
      expect(s.ctx.watermark).toBe(before);
      expect(s.value.slot).toBe('idle');
      expect(published(effects, 'writer.settled')).toEqual([{ type: 'writer.settled', writer_id: 's1-w2', outcome, failure, watermark: before }]);
      expect(published(effects, 'status')).toEqual([{ type: 'status', text: '' }]);
      expect(s.checkpoint().result).toBe('started');
    }
  });

  it('scenario 17 (machine half): a wait that times out leaves the writer running, and its later success still advances the watermark', () => {
    const s = new SessionDriver();
    s.turn(5_000);
    s.checkpoint();
    s.settle('success');
    s.turn(6_000);
    s.checkpoint();
    const boundary = s.ctx.writer?.boundary;
    const [timer] = timerStarts(s.rebuild({ checkpointExists: true }));
    expect(timer?.ms).toBe(30_000);
    s.fire(timer?.timerId ?? '');
    expect(s.ctx.writer?.boundary).toBe(boundary); // not cancelled
    expect(s.ctx.rebuild?.phase).toBe('rendering');
    s.settle('success');
    expect(s.ctx.watermark).toBe(boundary);
  });

  it('scenario 18: failure classification passes through the writer and the session unchanged', () => {
    for (const failure of [TRANSIENT, FAILURES.overflow, FAILURES.auth]) {
      const w = new WriterDriver();
      w.fold(PREPARED, { type: 'model.failed', failure, status: failure.kind === 'auth' ? 401 : failure.kind === 'transient' ? 429 : 400 });
      const [settle] = w.settles();
      expect(settle).toMatchObject({ outcome: 'failure', failure });
      const s = new SessionDriver();
      s.turn(5_000);
      s.checkpoint();
      expect(published(s.settle('failure', failure), 'writer.settled')[0]?.failure).toEqual(failure);
    }
    const cancelled = new WriterDriver();
    cancelled.fold(PREPARED, { type: 'writer.cancel', reason: 'drain' });
    expect(cancelled.settles()).toEqual([expect.objectContaining({ outcome: 'cancelled', failure: expect.objectContaining({ kind: 'cancelled', retryable: false }) as unknown }) as unknown]);
  });

  it('scenario 19 (machine half): drain drops the queued request, keeps the running writer, and starts nothing until resumed', () => {
    const idle = new SessionDriver();
    expect(idle.fold({ type: 'drain.requested' })).toEqual([]);
    const s = new SessionDriver();
    s.turn(5_000);
    s.checkpoint();
    s.checkpoint();
    expect(s.ctx.pending).toBe('manual');
    expect(s.fold({ type: 'drain.requested' })).toEqual([]);
    expect(s.ctx.pending).toBeNull();
    expect(s.value.slot).toBe('running');
    expect(s.checkpoint()).toMatchObject({ result: 'skipped', reason: 'the daemon is draining' });
    expect(starts(s.turn(50_000))).toEqual([]);
    const settled = s.settle('success');
    expect(starts(settled)).toEqual([]);
    expect(s.ctx.watermark).toBe('m1');
    s.fold({ type: 'session.resumed' });
    expect(s.checkpoint().result).toBe('started');
  });

  it('scenario 20: cache performance comes from the writer’s own calls', () => {
    const w = new WriterDriver();
    w.fold(
      PREPARED,
      reply(null, { tools: ['read'], usage: { prompt: 10_000, completion: 50, cached: 9_000 } }),
      { type: 'tools.completed', results: [] },
      reply(null, { tools: ['edit'], usage: { prompt: 11_000, completion: 60, cached: 10_000 } }),
      { type: 'tools.completed', results: [] },
      reply('CHECKPOINT_COMPLETE', { usage: { prompt: 12_000, completion: 5, cached: 11_000 } }),
      verdict(),
      COMMITTED,
    );
    expect(w.settles()).toEqual([{ kind: 'settle', outcome: 'success', failure: null, reason: null, perf: { calls: 3, promptTokens: 33_000, cachedTokens: 30_000 } }]);
  });

  it('scenario 47: fork:false delta — starts after the watermark aligned back to a user message, or at the first message', () => {
    const m = (id: string, role: MessageIndexEntry['role']): MessageIndexEntry => ({ id, role, tokens: 10, textual: true, finished: role === 'assistant', toolCallIds: [] });
    const msgs = [m('u1', 'user'), m('a1', 'assistant'), m('u2', 'user'), m('a2', 'assistant'), m('t2', 'tool'), m('a3', 'assistant')];
    expect(msgs[deltaStartIndex(msgs, 'a1')]?.id).toBe('u2');
    expect(deltaStartIndex(msgs, null)).toBe(0);
    expect(msgs[deltaStartIndex(msgs, 'a2')]?.id).toBe('u2'); // aligned back over the tool result
    expect(deltaStartIndex(msgs, 'a3')).toBe(msgs.length); // nothing after the watermark
    // In the session: the first delta starts at the first message, the next one after the watermark.
    const s = new SessionDriver({ ...BASE_INPUT, fork: false, forkUnavailableReason: 'no writing tool could be mapped' });
    s.turn(5_000);
    s.turn(5_500);
    expect(starts(s.checkpoint().effects)[0]).toMatchObject({ mode: 'delta', deltaFrom: 'm1', boundary: 'm3', watermark: null });
    s.settle('success');
    s.turn(6_000);
    s.turn(6_500);
    // The watermark m3 is a user message; the message after it is its answer, so alignment goes back to m3 itself
    // (the aligned start may re-include covered messages back to the previous user message).
    expect(starts(s.checkpoint().effects)[0]).toMatchObject({ mode: 'delta', deltaFrom: 'm3', boundary: 'm7', watermark: 'm3' });
  });
});
