import { describe, expect, it } from 'vitest';
import { foldEvent, foldStart } from '../src/fold.ts';
import type { SessionEffect } from '../src/session-effects.ts';
import type { IndexedMessage, SessionEvent, SessionInput } from '../src/session-events.ts';
import { sessionMachine } from '../src/session-machine.ts';

const input: SessionInput = {
  sessionId: 's1',
  projectId: 'p1',
  usableWindow: 100_000,
  thresholds: [20_000, 40_000, 60_000, 80_000],
  maxAllowed: 87_000,
  checkpointEnabled: true,
  memoryWriteDisabled: false,
  fork: true,
  forkUnavailableReason: null,
  tail: { minTokens: 100, maxTokens: 200, minTextMessages: 2 },
};

let n = 0;
function user(): IndexedMessage {
  n++;
  return { id: `m${n}`, role: 'user', tokens: 60, textual: true, finished: false, toolCallIds: [], main: true, usageTotal: null };
}
function assistant(total: number, main = true): IndexedMessage {
  n++;
  return { id: `m${n}`, role: 'assistant', tokens: 60, textual: true, finished: true, toolCallIds: [], main, usageTotal: total };
}

function run(events: SessionEvent[], inp: SessionInput = input) {
  let step = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, inp);
  const all: SessionEffect[][] = [];
  for (const e of events) {
    step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, step.snapshot, e);
    all.push(step.effects);
  }
  return { snapshot: step.snapshot, effects: all, ctx: step.snapshot.context };
}

const types = (effects: SessionEffect[]) =>
  effects.map((e) => (e.kind === 'publish' ? e.event.type : e.kind === 'reply' ? `reply:${typeof e.body['result'] === 'string' ? e.body['result'] : 'closed'}` : e.kind));

describe('session machine', () => {
  it('crosses a rung once and starts a writer with the slot claimed in the same step', () => {
    const r = run([
      { type: 'messages.appended', messages: [user(), assistant(25_000), user(), assistant(26_000), user(), assistant(27_000)] },
      { type: 'messages.appended', messages: [user(), assistant(28_000)] },
    ]);
    expect(types(r.effects[0]!)).toEqual(['threshold.crossed', 'writer.start', 'writer.started', 'status']);
    expect(r.effects[1]).toEqual([]);
    expect(r.snapshot.value).toEqual({ slot: 'running', rebuild: 'idle', lifecycle: 'active' });
    expect(r.ctx.crossed).toEqual([20_000]);
  });

  it('gives one started and one queued request when several rungs are crossed at once', () => {
    const r = run([{ type: 'messages.appended', messages: [user(), assistant(10), user(), assistant(45_000)] }]);
    expect(types(r.effects[0]!)).toEqual(['threshold.crossed', 'threshold.crossed', 'writer.start', 'writer.started', 'status', 'writer.queued']);
    expect(r.snapshot.value).toEqual({ slot: 'runningPending', rebuild: 'idle', lifecycle: 'active' });
  });

  it('defers rungs while a writer runs and advances the watermark to the start-time boundary on success', () => {
    const first: SessionEvent[] = [
      { type: 'messages.appended', messages: [user(), assistant(10), user(), assistant(21_000)] },
      { type: 'messages.appended', messages: [user(), assistant(41_000)] },
    ];
    const r = run(first);
    expect(r.ctx.crossed).toEqual([20_000]);
    const start = r.effects[0]!.find((e) => e.kind === 'writer.start');
    if (start?.kind !== 'writer.start') throw new Error('no start');
    const settled = run([
      ...first,
      { type: 'writer.settled', writerId: start.writerId, outcome: 'success' },
      { type: 'messages.appended', messages: [user(), assistant(42_000)] },
    ]);
    expect(settled.ctx.watermark).toBe(start.boundary);
    expect(settled.ctx.crossed).toEqual([20_000, 40_000]);
  });

  it('does not consume rungs while checkpointing is disabled and ignores subagent usage', () => {
    const r = run([{ type: 'messages.appended', messages: [user(), assistant(50_000)] }], { ...input, checkpointEnabled: false });
    expect(r.ctx.crossed).toEqual([]);
    const sub = run([{ type: 'messages.appended', messages: [user(), assistant(50_000, false)] }]);
    expect(sub.ctx.tokens).toBe(0);
  });

  it('answers manual requests with started, queued, then a replaced pending request', () => {
    const r = run([
      { type: 'messages.appended', messages: [user(), assistant(10)] },
      { type: 'checkpoint.requested', requestId: 'r1' },
      { type: 'checkpoint.requested', requestId: 'r2' },
      { type: 'checkpoint.requested', requestId: 'r3' },
    ]);
    expect(types(r.effects[1]!)).toContain('reply:started');
    expect(types(r.effects[2]!)).toContain('reply:queued');
    expect(types(r.effects[3]!)).toContain('reply:queued');
    expect(r.ctx.pending).toBe('manual');
  });

  it('waits for the running writer before closing', () => {
    const r = run([
      { type: 'messages.appended', messages: [user(), assistant(10)] },
      { type: 'checkpoint.requested', requestId: 'r1' },
      { type: 'close.requested', requestId: 'c1', waitMs: 120_000 },
    ]);
    expect(r.snapshot.value).toEqual({ slot: 'running', rebuild: 'idle', lifecycle: 'closing' });
    const id = r.ctx.writer!.writerId;
    let s = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, r.snapshot, { type: 'writer.settled', writerId: id, outcome: 'failure', failure: { kind: 'transient', retryable: true } });
    expect(s.snapshot.value).toEqual({ slot: 'idle', rebuild: 'idle', lifecycle: 'closed' });
    expect(types(s.effects)).toContain('reply:closed');
    expect((s.snapshot.context).watermark).toBeNull();
    s = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, s.snapshot, { type: 'session.resumed' });
    expect(s.snapshot.value).toEqual({ slot: 'idle', rebuild: 'idle', lifecycle: 'active' });
  });
});

describe('recovery gate (scenario 8)', () => {
  const gateInput: SessionInput = { ...input, thresholds: [20_000, 30_000], maxAllowed: 47_000 };
  const fire = (tokens: number): SessionEvent => ({ type: 'messages.appended', messages: [user(), assistant(tokens)] });
  const startOf = (effects: SessionEffect[]) => effects.find((e) => e.kind === 'writer.start');

  it('re-fires the final rung once, one rung-step after a transient failure of its writer', () => {
    let r = run([fire(21_000)], gateInput);
    const w1 = startOf(r.effects[0]!);
    if (w1?.kind !== 'writer.start') throw new Error('no writer');
    const events: SessionEvent[] = [fire(21_000), { type: 'writer.settled', writerId: w1.writerId, outcome: 'success' }, fire(31_000)];
    r = run(events, gateInput);
    const w2 = startOf(r.effects[2]!);
    if (w2?.kind !== 'writer.start') throw new Error('no final-rung writer');
    const failed = [...events, { type: 'writer.settled', writerId: w2.writerId, outcome: 'failure', failure: { kind: 'transient', retryable: true } } as SessionEvent];
    r = run([...failed, fire(31_000), fire(35_000), fire(40_999)], gateInput);
    expect(r.ctx.recoveryGate).toBe(41_000);
    expect(r.effects.slice(-3).flat().filter((e) => e.kind === 'writer.start')).toEqual([]);
    r = run([...failed, fire(31_000), fire(40_999), fire(41_000), fire(45_000)], gateInput);
    expect(r.effects.at(-2)!.filter((e) => e.kind === 'writer.start')).toHaveLength(1);
    expect(r.effects.at(-1)!.filter((e) => e.kind === 'writer.start')).toHaveLength(0);
    expect(r.ctx.recoveryGate).toBeNull();
  });

  it('arms nothing for a deterministic, cancelled or non-final failure, or when the gate would not exceed the firing count', () => {
    const final = (failure: SessionEvent) => {
      const first = run([fire(31_000)], gateInput); // crosses both rungs: the started writer is the 20 K one
      return { first, failure };
    };
    const { first } = final({ type: 'session.resumed' });
    const w = startOf(first.effects[0]!);
    if (w?.kind !== 'writer.start') throw new Error('no writer');
    const nonFinal = run([fire(31_000), { type: 'writer.settled', writerId: w.writerId, outcome: 'failure', failure: { kind: 'transient', retryable: true } }], gateInput);
    expect(nonFinal.ctx.recoveryGate).toBeNull();
    for (const failure of [{ kind: 'auth', retryable: false }, { kind: 'cancelled', retryable: false }] as const) {
      const base = run([fire(21_000)], gateInput);
      const a = startOf(base.effects[0]!);
      if (a?.kind !== 'writer.start') throw new Error('no writer');
      const evs: SessionEvent[] = [fire(21_000), { type: 'writer.settled', writerId: a.writerId, outcome: 'success' }, fire(31_000)];
      const b = startOf(run(evs, gateInput).effects[2]!);
      if (b?.kind !== 'writer.start') throw new Error('no writer');
      const r = run([...evs, { type: 'writer.settled', writerId: b.writerId, outcome: 'failure', failure }], gateInput);
      expect(r.ctx.recoveryGate).toBeNull();
    }
    // Fired at the cap: min(47 000 + 10 000, 47 000) does not exceed 47 000.
    const capped = run([fire(21_000)], gateInput);
    const c1 = startOf(capped.effects[0]!);
    if (c1?.kind !== 'writer.start') throw new Error('no writer');
    const evs: SessionEvent[] = [fire(21_000), { type: 'writer.settled', writerId: c1.writerId, outcome: 'success' }, fire(47_000)];
    const c2 = startOf(run(evs, gateInput).effects[2]!);
    if (c2?.kind !== 'writer.start') throw new Error('no writer');
    expect(run([...evs, { type: 'writer.settled', writerId: c2.writerId, outcome: 'failure', failure: { kind: 'transient', retryable: true } }], gateInput).ctx.recoveryGate).toBeNull();
  });
});

describe('rebuild abandoned after a restart', () => {
  it('drops the rebuild in progress without an answer and cancels its timer, so a new rebuild can run', () => {
    const r = run([
      { type: 'messages.appended', messages: [user(), assistant(10)] },
      { type: 'checkpoint.requested', requestId: 'c1' },
      { type: 'rebuild.requested', requestId: 'r1', reason: 'overflow', waitMs: 180_000, inFlightWaitMs: 30_000, checkpointExists: false },
    ]);
    expect(r.ctx.rebuild).toMatchObject({ requestId: 'r1', phase: 'waiting' });
    const timer = r.ctx.rebuild?.timerId;
    const a = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, r.snapshot, { type: 'rebuild.abandoned', requestId: 'r1', reason: 'daemon restarted' });
    expect((a.snapshot.context).rebuild).toBeNull();
    expect(a.effects).toEqual([{ kind: 'timer.cancel', timerId: timer }]);
    const again = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, a.snapshot, { type: 'rebuild.requested', requestId: 'r2', reason: 'manual', waitMs: 1_000, inFlightWaitMs: 30_000, checkpointExists: false });
    expect((again.snapshot.context).rebuild).toMatchObject({ requestId: 'r2' });
  });
});

describe('a session that inherited its checkpoint', () => {
  const inherited: SessionInput = { ...input, inheritedCheckpoint: true };
  const rebuild = (reason: 'manual' | 'compaction'): SessionEvent => ({ type: 'rebuild.requested', requestId: 'r1', reason, waitMs: 180_000, inFlightWaitMs: 30_000, checkpointExists: true });

  it('renders it on a rebuild before a writer of its own set a watermark, the whole context the tail', () => {
    for (const reason of ['manual', 'compaction'] as const) {
      const r = run([{ type: 'messages.appended', messages: [user(), assistant(10)] }, rebuild(reason)], inherited);
      expect(r.ctx.watermark).toBeNull();
      expect(r.effects[1]?.find((e) => e.kind === 'rebuild.render')).toEqual({ kind: 'rebuild.render', requestId: 'r1', watermark: null });
      expect(r.effects[1]?.some((e) => e.kind === 'writer.start' || e.kind === 'rebuild.compact')).toBe(false);
    }
  });

  it('without it, the same rebuild asks a writer first, and the agent\'s compaction is compacted at once', () => {
    const manual = run([{ type: 'messages.appended', messages: [user(), assistant(10)] }, rebuild('manual')]);
    expect(types(manual.effects[1]!)).toContain('writer.start');
    expect(manual.effects[1]?.some((e) => e.kind === 'rebuild.render')).toBe(false);
    const compaction = run([{ type: 'messages.appended', messages: [user(), assistant(10)] }, rebuild('compaction')]);
    expect(types(compaction.effects[1]!)).toContain('rebuild.compact');
  });

  it('needs the checkpoint file: an inherited session whose file is gone asks a writer as any other', () => {
    const r = run([{ type: 'messages.appended', messages: [user(), assistant(10)] }, { ...rebuild('manual'), checkpointExists: false } as SessionEvent], inherited);
    expect(types(r.effects[1]!)).toContain('writer.start');
  });
});
