import { describe, expect, it } from 'vitest';
import type { WriterOutcome } from '@baton/protocol';
import {
  CANCELLED,
  COMMITTED,
  FAILURES,
  PREPARED,
  SessionDriver,
  TOOLS_DONE,
  WriterDriver,
  kinds,
  published,
  reply,
  verdict,
} from './drivers.ts';

/**
 * Acceptance scenarios of the writer inside its run (22, 23, 25, 26) and the missing fork prefix (46).
 * Prompt texts, tool execution and the validator's reading of files are covered by the runtime's integration tests.
 */
describe('writer run scenarios', () => {
  it('scenario 22: an empty or reasoning-only stop gets the checkpoint reminder; CHECKPOINT_COMPLETE ends the turn normally', () => {
    for (const stop of [reply(''), reply(null), reply('   \n'), reply(null, { reasoning: 'I should update §4' })]) {
      const w = new WriterDriver();
      const effects = w.fold(PREPARED, stop);
      expect(effects).toEqual([
        { kind: 'model.call', call: 1, nudge: null },
        { kind: 'reentered', iteration: 1, reason: 'continuation' },
        { kind: 'model.call', call: 2, nudge: { kind: 'continuation' } },
      ]);
      expect(w.fold(reply('CHECKPOINT_COMPLETE'))).toEqual([{ kind: 'validate' }]);
      expect(w.ctx.phase).toBe('validating');
    }
    // Tool calls are not a stop: they run and the writer is called again without a reminder.
    const t = new WriterDriver();
    expect(t.fold(PREPARED, reply(null, { tools: ['edit', 'write'] }))).toContainEqual({ kind: 'tools.run', calls: [expect.objectContaining({ name: 'edit' }), expect.objectContaining({ name: 'write' })] });
    expect(t.fold(TOOLS_DONE)).toEqual([{ kind: 'model.call', call: 2, nudge: null }]);
  });

  it('scenario 23: the third consecutive empty stop (limit 2) fails the writer and the watermark stays', () => {
    const w = new WriterDriver();
    w.fold(PREPARED, reply(''), reply(null, { reasoning: 'hmm' }), reply(''));
    expect(w.calls()).toHaveLength(3);
    const [settle] = w.settles();
    expect(settle).toMatchObject({ outcome: 'failure', failure: { kind: 'other', retryable: false, message: 'no completion after 2 reminders' } });
    expect(w.snapshot.status).toBe('done');
    // The session applies that settlement: no watermark.
    const s = new SessionDriver();
    s.turn(5_000);
    s.checkpoint();
    s.settle('failure', settle?.failure ?? undefined);
    expect(s.ctx.watermark).toBeNull();
    // The reminder budget is per (re-)entry: a validation re-entry gets two fresh reminders.
    const r = new WriterDriver();
    r.fold(PREPARED, reply(''), reply(''), reply('done'), verdict({ errors: ['§2 header missing'] }), reply(''), reply(''), reply('done'));
    expect(r.settles()).toEqual([]);
    expect(r.ctx.phase).toBe('validating');
  });

  it('scenario 25: no notifications — a settlement only publishes writer.settled and the idle status', () => {
    for (const [outcome, failure] of [['success', undefined], ['failure', FAILURES.transient], ['cancelled', CANCELLED], ['skipped', undefined]] as [WriterOutcome, typeof CANCELLED | undefined][]) {
      const s = new SessionDriver();
      s.turn(5_000);
      s.checkpoint();
      expect(kinds(s.settle(outcome, failure))).toEqual(['publish:writer.settled', 'publish:status']);
    }
  });

  describe('scenario 26: validation verdicts', () => {
    const toValidation = (w: WriterDriver) => w.fold(reply('CHECKPOINT_COMPLETE'));

    it('scenario 26: a template-conforming checkpoint passes the first check — no re-entry, committed', () => {
      const w = new WriterDriver();
      w.fold(PREPARED);
      toValidation(w);
      expect(w.fold(verdict())).toEqual([{ kind: 'commit', warnings: [] }]);
      w.fold(COMMITTED);
      expect(w.settles()).toEqual([expect.objectContaining({ outcome: 'success' })]);
      expect(w.effects.filter((e) => e.kind === 'reentered')).toEqual([]);
    });

    it('scenario 26: over budget gets the EXTRACTION reflection even when structural errors exist too', () => {
      const w = new WriterDriver();
      w.fold(PREPARED);
      toValidation(w);
      const effects = w.fold(verdict({ errors: ['§3 header missing'], extract: ['checkpoint.md §5 is 2 100 tokens (budget 1 500)'] }));
      expect(effects).toEqual([
        { kind: 'reentered', iteration: 1, reason: 'extraction' },
        { kind: 'model.call', call: 2, nudge: { kind: 'extraction', details: ['checkpoint.md §5 is 2 100 tokens (budget 1 500)'] } },
      ]);
    });

    it('scenario 26: structural errors only get the grouped validation reflection', () => {
      const w = new WriterDriver();
      w.fold(PREPARED);
      toValidation(w);
      expect(w.fold(verdict({ errors: ['/mem/sessions/s1/checkpoint.md: §3 header missing', '/mem/projects/p1/MEMORY.md: section "Rules" missing'] }))).toContainEqual({
        kind: 'model.call',
        call: 2,
        nudge: { kind: 'validation', details: ['/mem/sessions/s1/checkpoint.md: §3 header missing', '/mem/projects/p1/MEMORY.md: section "Rules" missing'] },
      });
    });

    it('scenario 26: warnings only change nothing — committed with the warnings logged', () => {
      const w = new WriterDriver();
      w.fold(PREPARED);
      toValidation(w);
      expect(w.fold(verdict({ warnings: ['MEMORY.md entry "x" lacks Why:'] }))).toEqual([{ kind: 'commit', warnings: ['MEMORY.md entry "x" lacks Why:'] }]);
    });

    it('scenario 26 [fix]: structural errors after the 4th turn are not committed — quarantined, failure{validation}, watermark stays', () => {
      const w = new WriterDriver();
      w.fold(PREPARED);
      const bad = verdict({ errors: ['§1 has no block quote'] });
      for (let turn = 1; turn <= 4; turn++) {
        toValidation(w);
        w.fold(bad);
      }
      expect(w.calls()).toHaveLength(4);
      expect(w.ctx.reentries).toBe(3);
      expect(w.effects.filter((e) => e.kind === 'commit')).toEqual([]);
      expect(w.effects).toContainEqual({ kind: 'quarantine', errors: ['§1 has no block quote'] });
      const [settle] = w.settles();
      expect(settle).toMatchObject({ outcome: 'failure', failure: { kind: 'validation', retryable: false } });
      const s = new SessionDriver();
      s.turn(5_000);
      s.checkpoint();
      s.settle('failure', settle?.failure ?? undefined);
      expect(s.ctx.watermark).toBeNull();
    });

    it('scenario 26 [fix]: budget overruns alone after the 4th turn commit with a warning (success)', () => {
      const w = new WriterDriver();
      w.fold(PREPARED);
      const over = verdict({ extract: ['§10 over budget'] });
      for (let turn = 1; turn <= 4; turn++) {
        toValidation(w);
        w.fold(over);
      }
      expect(w.effects.at(-1)).toEqual({ kind: 'commit', warnings: ['§10 over budget'] });
      w.fold(COMMITTED);
      expect(w.settles()).toEqual([expect.objectContaining({ outcome: 'success' })]);
      expect(w.calls()).toHaveLength(4);
    });
  });

  it('scenario 46 [fix]: a missing fork prefix settles as skipped and leaves the watermark untouched', () => {
    const w = new WriterDriver();
    w.fold({ type: 'writer.prepare_failed', outcome: 'skipped', reason: 'no fork prefix captured for the boundary' });
    expect(w.settles()).toEqual([{ kind: 'settle', outcome: 'skipped', failure: null, reason: 'no fork prefix captured for the boundary', perf: { calls: 0, promptTokens: 0, cachedTokens: 0 } }]);
    expect(w.calls()).toEqual([]);
    const s = new SessionDriver();
    s.turn(5_000);
    s.checkpoint();
    s.settle('success');
    const before = s.ctx.watermark;
    s.turn(6_000);
    s.checkpoint();
    const effects = s.fold({ type: 'writer.settled', writerId: 's1-w2', outcome: 'skipped', reason: 'no fork prefix captured for the boundary' });
    expect(s.ctx.watermark).toBe(before);
    expect(published(effects, 'writer.settled')).toEqual([{ type: 'writer.settled', writer_id: 's1-w2', outcome: 'skipped', watermark: before }]);
    expect(s.value.slot).toBe('idle');
  });
});
