import { describe, expect, it } from 'vitest';
import { indexEntries } from '../../src/index-list.ts';
import { isOverflow } from '../../src/session-context.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import { CHECKPOINT_RESERVED, ThresholdError, defaultLadderPercents, resolveThresholds } from '../../src/thresholds.ts';
import {
  BASE_INPUT,
  CANCELLED,
  FAILURES,
  SessionDriver,
  TRANSIENT,
  published,
  rebuildReplies,
  starts,
} from './drivers.ts';

/** Acceptance scenarios 1–9: triggering and thresholds. */
describe('thresholds scenarios', () => {
  it('scenario 1: ladder selection by usable window (a small window gets a ladder: a deliberate difference)', () => {
    // The reference gives a usable window under 25 000 no ladder; Baton's reserves scale with small windows, so a
    // 32 000-token model has a usable window of 21 600 and a ladder too. Only a window under 8 000 has none.
    const windows = [7_999, 24_999, 25_000, 200_000, 200_001, 500_000, 500_001];
    expect(windows.map((w) => defaultLadderPercents(w))).toEqual([
      [],
      [20, 40, 60, 80],
      [20, 40, 60, 80],
      [20, 40, 60, 80],
      [10, 20, 30, 40, 50, 60, 70, 80, 90],
      [10, 20, 30, 40, 50, 60, 70, 80, 90],
      Array.from({ length: 18 }, (_, i) => (i + 1) * 5),
    ]);
    expect(resolveThresholds(7_999)).toEqual([]);
    expect(resolveThresholds(25_000, { reserved: 0 })).toEqual([5_000, 10_000, 15_000, 20_000]);
    expect(resolveThresholds(500_001)).toHaveLength(18);
  });

  it('scenario 2: clamping — first over-cap value clamped, later ones dropped, sorted and deduped; no room throws', () => {
    expect(CHECKPOINT_RESERVED).toBe(13_000);
    expect(resolveThresholds(60_000, { overrides: ['50K', '30K', '60K'] })).toEqual([30_000, 47_000]);
    expect(resolveThresholds(60_000, { overrides: ['30K', '30K', '10%'] })).toEqual([6_000, 30_000]);
    expect(() => resolveThresholds(13_000, { overrides: ['10%'] })).toThrow(ThresholdError);
    expect(() => resolveThresholds(13_000, { overrides: ['50K', '30K', '60K'] })).toThrow(/no room/);
  });

  it('scenario 3: a crossing fires once — four checks at the same count make exactly one writer request', () => {
    const s = new SessionDriver({ ...BASE_INPUT, thresholds: [30_000, 45_000], maxAllowed: 87_000 });
    for (let i = 0; i < 4; i++) s.turn(35_000);
    expect(published(s.effects, 'threshold.crossed')).toEqual([{ type: 'threshold.crossed', threshold: 30_000, tokens: 35_000 }]);
    expect(starts(s.effects)).toHaveLength(1);
    // Also once the writer has settled: the rung stays consumed.
    s.settle('success');
    s.turn(35_000);
    expect(starts(s.effects)).toHaveLength(1);
    expect(s.ctx.crossed).toEqual([30_000]);
  });

  it('scenario 4: multiple rungs in one call give started + queued, both rungs crossed, one writer', () => {
    const s = new SessionDriver({ ...BASE_INPUT, thresholds: [30_000, 45_000] });
    const effects = s.turn(50_000);
    expect(published(effects, 'threshold.crossed').map((e) => e.threshold)).toEqual([30_000, 45_000]);
    expect(starts(effects)).toHaveLength(1);
    expect(published(effects, 'writer.started')).toHaveLength(1);
    expect(published(effects, 'writer.queued')).toHaveLength(1);
    expect(s.ctx.crossed).toEqual([30_000, 45_000]);
    expect(s.value.slot).toBe('runningPending');
    // Only the started writer exists; the queued request becomes one writer when it settles.
    s.settle('success');
    expect(starts(s.effects)).toHaveLength(2);
    expect(s.value.slot).toBe('running');
  });

  it('scenario 5: a busy writer defers rungs — no request, the rung stays armed and fires after settlement', () => {
    const s = new SessionDriver();
    s.turn(5_000);
    expect(s.checkpoint().result).toBe('started');
    const busy = s.turn(25_000);
    expect(published(busy, 'threshold.crossed')).toEqual([]);
    expect(published(busy, 'writer.queued')).toEqual([]);
    expect(s.ctx.crossed).toEqual([]);
    expect(s.ctx.pending).toBeNull();
    s.settle('success');
    expect(starts(s.log.at(-1)?.effects ?? [])).toHaveLength(0);
    const later = s.turn(26_000);
    expect(published(later, 'threshold.crossed').map((e) => e.threshold)).toEqual([20_000]);
    expect(starts(later)).toHaveLength(1);
  });

  it('scenario 6: the disable switches do not consume rungs; with the switch cleared the rungs fire', () => {
    for (const off of [{ checkpointEnabled: false }, { memoryWriteDisabled: true }]) {
      const s = new SessionDriver({ ...BASE_INPUT, ...off });
      const effects = s.turn(45_000);
      expect(effects.filter((e) => e.kind !== 'publish' || e.event.type !== 'status')).toEqual([]);
      expect(s.ctx.crossed).toEqual([]);
      expect(s.checkpoint().result).toBe('skipped');
      // The session opened again with the switch cleared keeps its (unconsumed) ladder.
      const cleared = new SessionDriver({ ...BASE_INPUT });
      cleared.snapshot = sessionMachine.resolveState({ value: s.snapshot.value, context: { ...s.ctx, input: { ...BASE_INPUT } } });
      const fired = cleared.turn(45_000);
      expect(published(fired, 'threshold.crossed').map((e) => e.threshold)).toEqual([20_000, 40_000]);
      expect(starts(fired)).toHaveLength(1);
    }
  });

  it('scenario 7: who may trigger — the main slice drives thresholds, subagent slices never do', () => {
    // The runtime maps `agent_id` absent / "main" to the main slice; every other agent id is a subagent slice.
    const sub = new SessionDriver();
    const effects = sub.turn(50_000, false);
    expect(effects).toEqual([]);
    expect(sub.ctx.tokens).toBe(0);
    expect(indexEntries(sub.ctx.index)).toEqual([]);
    const main = new SessionDriver();
    expect(starts(main.turn(50_000))).toHaveLength(1);
    // Mixed batch: only the main-slice usage counts.
    const mixed = new SessionDriver();
    mixed.append(mixed.user(), mixed.assistant(10_000), mixed.user({ main: false }), mixed.assistant(90_000, { main: false }));
    expect(mixed.ctx.tokens).toBe(10_000);
    expect(mixed.ctx.crossed).toEqual([]);
  });

  describe('scenario 8: recovery gate', () => {
    const input = { ...BASE_INPUT, thresholds: [20_000, 30_000], maxAllowed: 47_000 };
    /** A session whose final-rung (30 K) writer fired at 31 000 and then settled with `outcome`. */
    function finalRungSettled(...settle: Parameters<SessionDriver['settle']>): SessionDriver {
      const s = new SessionDriver(input);
      s.turn(21_000);
      s.settle('success');
      const fired = s.turn(31_000);
      expect(starts(fired)).toHaveLength(1);
      expect(s.ctx.writer?.rung).toBe(30_000);
      s.settle(...settle);
      return s;
    }

    it('scenario 8: a transient failure of the final rung re-fires it once, one rung-step later', () => {
      const s = finalRungSettled('failure', TRANSIENT);
      expect(s.ctx.recoveryGate).toBe(41_000);
      for (const t of [31_000, 35_000, 40_999]) expect(starts(s.turn(t))).toHaveLength(0);
      const refire = s.turn(41_000);
      expect(published(refire, 'threshold.crossed')).toEqual([{ type: 'threshold.crossed', threshold: 30_000, tokens: 41_000 }]);
      expect(starts(refire)).toHaveLength(1);
      expect(s.ctx.recoveryGate).toBeNull();
      s.settle('failure', { ...TRANSIENT });
      s.turn(45_000);
      // Armed again by the second transient failure (fired at 41 000 → 47 000 cap), but not re-fired below it.
      expect(s.ctx.recoveryGate).toBe(47_000);
      expect(starts(s.log.at(-1)?.effects ?? [])).toHaveLength(0);
    });

    it('scenario 8: deterministic, unclassified, cancelled and skipped settlements, and a wait that times out, arm nothing', () => {
      for (const f of [FAILURES.overflow, FAILURES.auth, FAILURES.validation, FAILURES.other, { ...TRANSIENT, retryable: false }]) {
        expect(finalRungSettled('failure', f).ctx.recoveryGate).toBeNull();
      }
      expect(finalRungSettled('failure').ctx.recoveryGate).toBeNull();
      expect(finalRungSettled('cancelled', CANCELLED).ctx.recoveryGate).toBeNull();
      expect(finalRungSettled('skipped').ctx.recoveryGate).toBeNull();
      // A wait that times out is not a settlement: the rebuild's timer firing arms nothing.
      const s = new SessionDriver(input);
      s.turn(21_000);
      s.settle('success');
      s.turn(31_000);
      const timer = s.rebuild({ checkpointExists: true }).find((e) => e.kind === 'timer.start');
      if (timer?.kind !== 'timer.start') throw new Error('no wait');
      s.fire(timer.timerId);
      expect(s.ctx.recoveryGate).toBeNull();
    });

    it('scenario 8: a transient failure of a non-final rung arms nothing', () => {
      const s = new SessionDriver(input);
      s.turn(21_000);
      expect(s.ctx.writer?.rung).toBe(20_000);
      s.settle('failure', TRANSIENT);
      expect(s.ctx.recoveryGate).toBeNull();
    });

    it('scenario 8: a gate that would not exceed the firing count arms nothing', () => {
      const s = new SessionDriver(input);
      s.turn(21_000);
      s.settle('success');
      s.turn(47_000);
      s.settle('failure', TRANSIENT);
      expect(s.ctx.recoveryGate).toBeNull();
    });

    it('scenario 8: resetting the ladder (a rebuild) drops a pending gate', () => {
      const s = finalRungSettled('failure', TRANSIENT);
      expect(s.ctx.recoveryGate).toBe(41_000);
      s.rebuild({ checkpointExists: true });
      s.rendered(true);
      expect(s.ctx.recoveryGate).toBeNull();
      expect(s.ctx.crossed).toEqual([]);
    });
  });

  it('scenario 9: thresholds never rebuild — crossing the final rung below usable only writes a checkpoint', () => {
    const s = new SessionDriver({ ...BASE_INPUT, thresholds: [20_000, 80_000] });
    s.turn(21_000);
    s.settle('success');
    const final = s.turn(85_000);
    expect(starts(final)).toHaveLength(1);
    expect(isOverflow(s.ctx)).toBe(false);
    s.settle('success');
    expect(s.effects.filter((e) => e.kind.startsWith('rebuild.') || e.kind.startsWith('timer.'))).toEqual([]);
    expect(rebuildReplies(s.effects)).toEqual([]);
    expect(s.ctx.rebuild).toBeNull();
    // Only reaching the usable window signals an overflow (the agent then asks for a rebuild).
    s.turn(100_000);
    expect(isOverflow(s.ctx)).toBe(true);
    expect(s.ctx.rebuild).toBeNull();
  });
});
