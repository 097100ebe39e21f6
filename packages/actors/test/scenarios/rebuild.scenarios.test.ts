import { describe, expect, it } from 'vitest';
import { indexEntries, indexIds } from '../../src/index-list.ts';
import {
  adjustForToolPairs,
  computeBoundaryIndex,
  DEFAULT_TAIL_POLICY,
  type MessageIndexEntry,
} from '../../src/boundary.ts';
import { isOverflow } from '../../src/session-context.ts';
import { REBUILD_STATUS } from '../../src/session-rebuild.ts';
import {
  BASE_INPUT,
  FAILURES,
  SessionDriver,
  published,
  rebuildReplies,
  starts,
  statuses,
  timerStarts,
} from './drivers.ts';

/**
 * Acceptance scenarios 34–41 (rebuild) at the machine level: the decision chain, waits as logged timers, the
 * watermark as the only boundary, the ladder reset and usage recovery. Rendering the text, the marker's parts and
 * timestamps, and the layout of the rebuilt context (42–44) are the runtime's integration tests.
 */

/** One rung at 20 000: a session with a committed checkpoint (watermark m3), more conversation after it, no writer. */
function withCheckpoint(): SessionDriver {
  const s = new SessionDriver({ ...BASE_INPUT, thresholds: [20_000] });
  s.turn(5_000);
  s.checkpoint();
  s.settle('success');
  s.turn(30_000);
  s.settle('success');
  s.turn(100_000);
  expect(s.ctx.writer).toBeNull();
  return s;
}

const outcomeOf = (s: SessionDriver) => rebuildReplies(s.effects).map((r) => r.outcome);

describe('rebuild scenarios', () => {
  it('scenario 34: usable checkpoint, no writer — render from the watermark, tail after it, ladder re-armed', () => {
    const s = withCheckpoint();
    const w = s.ctx.watermark;
    expect(w).toBe('m3');
    expect(isOverflow(s.ctx)).toBe(true);
    const effects = s.rebuild({ checkpointExists: true });
    expect(effects).toEqual([{ kind: 'rebuild.render', requestId: expect.any(String) as unknown, watermark: w }]);
    const entries = indexEntries(s.ctx.index);
    const tail = entries.slice(entries.findIndex((m) => m.id === w) + 1).map((m) => m.id);
    const done = s.rendered(true, tail);
    expect(rebuildReplies(done)).toEqual([{ kind: 'rebuild.reply', requestId: expect.any(String) as unknown, outcome: 'rebuilt', coveredUpTo: w, statusText: REBUILD_STATUS.rebuilt, withContext: true }]);
    expect(published(done, 'rebuild.completed')).toEqual([{ type: 'rebuild.completed', outcome: 'rebuilt', covered_up_to: w }]);
    // The watermark message itself is covered by the checkpoint: the context is the marker, then what follows W.
    expect(indexIds(s.ctx.index)).toEqual([expect.stringMatching(/^marker/), ...tail]);
    expect(indexIds(s.ctx.index)).not.toContain(w);
    expect(s.ctx.crossed).toEqual([]);
    expect(s.ctx.recoveryGate).toBeNull();
    expect(s.ctx.watermark).toBe(w);
    expect(statuses(done)).toEqual(['']);
  });

  it('scenario 34 (boundary selection): the tail floor and ceiling over real-token counts', () => {
    const m = (id: string, role: MessageIndexEntry['role'], tokens: number, opts: Partial<MessageIndexEntry> = {}): MessageIndexEntry => ({ id, role, tokens, textual: true, finished: role === 'assistant', toolCallIds: [], ...opts });
    expect(computeBoundaryIndex([], DEFAULT_TAIL_POLICY)).toBe(-1);
    // No finished assistant (or only at index 0): the first message.
    expect(computeBoundaryIndex([m('u1', 'user', 100), m('a1', 'assistant', 100, { finished: false })])).toBe(0);
    // Walks back until ≥ 10 000 tokens and ≥ 5 text messages are preserved.
    const msgs = Array.from({ length: 20 }, (_, i) => m(`x${i}`, i % 2 === 0 ? 'user' : 'assistant', 1_500));
    const b = computeBoundaryIndex(msgs);
    const tail = msgs.slice(b).reduce((n, x) => n + x.tokens, 0);
    expect(tail).toBeGreaterThanOrEqual(10_000);
    expect(b).toBe(13); // from L − 1 = 18 back to 13: 7 messages × 1 500 = 10 500 ≥ 10 000, 7 text messages ≥ 5
    // Never moves forward past the ceiling: a huge last exchange is itself the tail.
    const huge = [m('u1', 'user', 100), m('a1', 'assistant', 100), m('u2', 'user', 25_000), m('a2', 'assistant', 100)];
    expect(computeBoundaryIndex(huge)).toBe(2);
  });

  it('scenario 34 (API invariants): the preserved tail never starts with a tool result whose call is covered', () => {
    const m = (id: string, role: MessageIndexEntry['role'], calls: string[] = [], finished = role === 'assistant'): MessageIndexEntry => ({ id, role, tokens: 10, textual: role !== 'tool', finished, toolCallIds: calls });
    const msgs = [m('u1', 'user'), m('a1', 'assistant', ['c1', 'c2']), m('t1', 'tool', ['c1']), m('t2', 'tool', ['c2']), m('a2', 'assistant'), m('u2', 'user'), m('a3', 'assistant')];
    // A boundary at a1 would leave t1/t2 (answers to a1's calls) in the tail: it moves before the call.
    expect(adjustForToolPairs(msgs, 1)).toBe(0);
    // A boundary at t1 (call covered, one result preserved) moves back too.
    expect(adjustForToolPairs(msgs, 2)).toBe(0);
    // After both results the pair is whole on the covered side: unchanged.
    expect(adjustForToolPairs(msgs, 3)).toBe(3);
    expect(adjustForToolPairs(msgs, 5)).toBe(5);
    // A call issued by the very first message cannot be kept with its result: no boundary.
    expect(adjustForToolPairs([m('a0', 'assistant', ['c0']), m('t0', 'tool', ['c0'])], 0)).toBe(-1);
    // In the session: a writer's boundary never separates a call from its result.
    const s = new SessionDriver({ ...BASE_INPUT, tail: { minTokens: 1, maxTokens: 25, minTextMessages: 1 } });
    s.append(s.user(), s.assistant(null, { toolCallIds: ['k1'], finished: false }), s.tool('k1'), s.assistant(5_000));
    const [start] = starts(s.checkpoint().effects);
    const entries = indexEntries(s.ctx.index);
    const idx = entries.findIndex((x) => x.id === start?.boundary);
    expect(entries.slice(idx + 1).some((x) => x.role === 'tool' && x.toolCallIds.includes('k1'))).toBe(false);
  });

  describe('scenario 35: template only — write first', () => {
    function cold() {
      const s = new SessionDriver({ ...BASE_INPUT, thresholds: [] });
      s.turn(5_000);
      s.turn(100_000);
      expect(s.ctx.watermark).toBeNull();
      expect(s.ctx.writer).toBeNull();
      const effects = s.rebuild({ reason: 'overflow', checkpointExists: true }); // the bootstrap template alone never counts
      return { s, effects };
    }

    it('scenario 35: a writer is started and awaited up to 180 s with "Writing checkpoint…"; success rebuilds (not compaction)', () => {
      const { s, effects } = cold();
      expect(starts(effects)).toEqual([expect.objectContaining({ trigger: 'rebuild' })]);
      expect(timerStarts(effects).map((t) => t.ms)).toEqual([180_000]);
      expect(statuses(effects).at(-1)).toBe('Writing checkpoint…');
      const boundary = s.ctx.writer?.boundary;
      const settled = s.settle('success');
      expect(settled).toContainEqual({ kind: 'timer.cancel', timerId: timerStarts(effects)[0]?.timerId });
      expect(settled).toContainEqual({ kind: 'rebuild.render', requestId: expect.any(String) as unknown, watermark: boundary });
      s.rendered(true);
      expect(outcomeOf(s)).toEqual(['rebuilt']);
      expect(s.effects.filter((e) => e.kind === 'rebuild.compact')).toEqual([]);
    });

    it('scenario 35: a failed writer falls back to compaction', () => {
      const { s } = cold();
      const settled = s.settle('failure', FAILURES.transient);
      expect(settled).toContainEqual(expect.objectContaining({ kind: 'rebuild.compact' }));
      s.compacted();
      expect(outcomeOf(s)).toEqual(['compacted']);
    });

    it('scenario 35: a writer that does not finish in time falls back to compaction and keeps running', () => {
      const { s, effects } = cold();
      const fired = s.fire(timerStarts(effects)[0]?.timerId ?? '');
      expect(fired).toContainEqual(expect.objectContaining({ kind: 'rebuild.compact' }));
      expect(s.ctx.writer).not.toBeNull();
      s.compacted();
      expect(outcomeOf(s)).toEqual(['compacted']);
      // A late timer or settlement does not answer twice.
      s.fire(timerStarts(effects)[0]?.timerId ?? '');
      s.settle('success');
      expect(outcomeOf(s)).toEqual(['compacted']);
    });
  });

  it('scenario 36: an in-flight writer with a checkpoint is awaited at most 30 s ("Preparing conversation context…"), then whatever is on disk renders', () => {
    const s = withCheckpoint();
    s.checkpoint();
    const running = s.ctx.writer?.writerId;
    const effects = s.rebuild({ reason: 'manual', checkpointExists: true, waitMs: 300_000 });
    expect(timerStarts(effects).map((t) => t.ms)).toEqual([30_000]);
    expect(statuses(effects)).toEqual(['Preparing conversation context…']);
    expect(effects.filter((e) => e.kind === 'rebuild.render')).toEqual([]);
    // Timeout: render now from the stored watermark; the writer is not cancelled.
    const fired = s.fire(timerStarts(effects)[0]?.timerId ?? '');
    expect(fired).toEqual([{ kind: 'rebuild.render', requestId: expect.any(String) as unknown, watermark: 'm3' }]);
    expect(s.ctx.writer?.writerId).toBe(running);
    s.rendered(true);
    expect(outcomeOf(s)).toEqual(['rebuilt']);
    expect(statuses(s.log.at(-1)?.effects ?? [])).toEqual(['Writing checkpoint…']);
    // Settled in time instead: the wait ends at once and renders from the new watermark.
    const t = withCheckpoint();
    t.checkpoint();
    const w = t.rebuild({ checkpointExists: true });
    const settled = t.settle('success');
    expect(settled).toContainEqual({ kind: 'timer.cancel', timerId: timerStarts(w)[0]?.timerId });
    expect(settled).toContainEqual({ kind: 'rebuild.render', requestId: expect.any(String) as unknown, watermark: t.ctx.watermark });
  });

  it('scenario 37: insert-failed never compacts', () => {
    const s = withCheckpoint();
    s.rebuild({ reason: 'manual', checkpointExists: true });
    const failed = s.rendered(false);
    expect(rebuildReplies(failed)).toEqual([{ kind: 'rebuild.reply', requestId: expect.any(String) as unknown, outcome: 'insert-failed', coveredUpTo: null, statusText: REBUILD_STATUS['insert-failed'], withContext: false }]);
    expect(REBUILD_STATUS['insert-failed']).toMatch(/could not be rebuilt/);
    expect(s.effects.filter((e) => e.kind === 'rebuild.compact')).toEqual([]);
    // Also when a failed writer was awaited first: with a usable checkpoint the wait renders, never compacts.
    const t = withCheckpoint();
    t.checkpoint();
    t.rebuild({ checkpointExists: true });
    t.settle('failure', FAILURES.auth);
    t.rendered(false);
    expect(outcomeOf(t)).toEqual(['insert-failed']);
    expect(t.effects.filter((e) => e.kind === 'rebuild.compact')).toEqual([]);
  });

  it('scenario 38: with checkpointing or memory writes off, compaction is used at once with a notice naming the switch', () => {
    for (const [input, outcome, text] of [
      [{ checkpointEnabled: false }, 'checkpoint-off', /Checkpointing is off/],
      [{ memoryWriteDisabled: true }, 'memory-write-off', /memory\.disable_write/],
    ] as const) {
      const s = new SessionDriver({ ...BASE_INPUT, ...input });
      s.turn(100_000);
      const effects = s.rebuild({ checkpointExists: true });
      expect(effects).toEqual([{ kind: 'rebuild.compact', requestId: expect.any(String) as unknown, boundary: expect.any(String) as unknown }]);
      expect(starts(s.effects)).toEqual([]);
      expect(timerStarts(s.effects)).toEqual([]);
      s.compacted();
      const [r] = rebuildReplies(s.effects);
      expect(r).toMatchObject({ outcome, withContext: true });
      expect(r?.statusText).toMatch(text);
    }
  });

  it('scenario 39: one recovery per usage — a recovered usage drives neither thresholds nor overflow again', () => {
    const s = withCheckpoint();
    s.rebuild({ checkpointExists: true });
    s.rendered(true);
    expect(isOverflow(s.ctx)).toBe(false);
    // The next user turn starts: the old usage (100 000) is still the newest one reported.
    const next = s.append(s.user());
    expect(next).toEqual([]);
    expect(isOverflow(s.ctx)).toBe(false);
    expect(indexEntries(s.ctx.index).filter((m) => m.id.startsWith('marker'))).toHaveLength(1);
    expect(starts(s.effects)).toHaveLength(2);
    // A newer finished assistant reports usage again: the re-armed ladder fires from the bottom.
    const fresh = s.append(s.assistant(25_000));
    expect(published(fresh, 'threshold.crossed').map((e) => e.threshold)).toEqual([20_000]);
  });

  it('scenario 40 [fix]: a watermark older than the newest marker still gives the boundary — never "now"', () => {
    const s = withCheckpoint();
    s.rebuild({ checkpointExists: true });
    s.rendered(true);
    const w = s.ctx.watermark;
    expect(indexIds(s.ctx.index)).not.toContain(w);
    // A second overflow before a newer writer succeeded: the re-armed rung started one, it is still running.
    s.turn(100_000);
    expect(s.ctx.writer).not.toBeNull();
    const [timer] = timerStarts(s.rebuild({ checkpointExists: true }));
    expect(timer?.ms).toBe(30_000);
    expect(s.fire(timer?.timerId ?? '')).toEqual([{ kind: 'rebuild.render', requestId: expect.any(String) as unknown, watermark: w }]);
    s.rendered(true, indexIds(s.ctx.index));
    expect(rebuildReplies(s.log.at(-1)?.effects ?? [])[0]).toMatchObject({ outcome: 'rebuilt', coveredUpTo: w });
  });

  it('scenario 41: manual rebuild of a cold session — "Writing checkpoint…", writer awaited up to 300 s, one answer, then idle', () => {
    const s = new SessionDriver();
    s.turn(5_000);
    s.checkpoint();
    s.settle('failure', FAILURES.other); // the threshold writer failed: still cold
    const effects = s.rebuild({ reason: 'manual', checkpointExists: false });
    expect(starts(effects)).toEqual([expect.objectContaining({ trigger: 'rebuild' })]);
    expect(timerStarts(effects).map((t) => t.ms)).toEqual([300_000]);
    expect(statuses(effects).at(-1)).toBe('Writing checkpoint…');
    // A second request while this one runs is refused at once and does not disturb it.
    const again = s.rebuild({ reason: 'manual', requestId: 'second' });
    expect(rebuildReplies(again)).toEqual([expect.objectContaining({ requestId: 'second', outcome: 'insert-failed' })]);
    s.settle('success');
    const done = s.rendered(true);
    expect(rebuildReplies(s.effects).filter((r) => r.requestId !== 'second')).toEqual([expect.objectContaining({ outcome: 'rebuilt', withContext: true })]);
    expect(statuses(done)).toEqual(['']);
    expect(indexEntries(s.ctx.index).filter((m) => m.id.startsWith('marker'))).toHaveLength(1);
  });
});
