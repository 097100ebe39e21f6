import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transition, type AnyStateMachine, type EventObject } from 'xstate';
import { foldEvent, foldStart } from '../src/fold.ts';
import type { SessionEffect } from '../src/session-effects.ts';
import type { SessionEvent } from '../src/session-events.ts';
import { sessionMachine } from '../src/session-machine.ts';
import type { WriterEffect } from '../src/writer-effects.ts';
import type { WriterEvent } from '../src/writer-events.ts';
import { writerMachine } from '../src/writer-machine.ts';
import { FULL_GEN, MODEL_INPUT, sessionEvents, sessionNoise, type SessionSnapshot } from './model-check/session-harness.ts';
import { WRITER_EVENTS, WRITER_INPUT, writerNoise, type WriterSnapshot } from './model-check/writer-harness.ts';

/** What XState's own `transition()` gives for the same step: the next snapshot and its `effect` actions. */
function xstateStep(machine: AnyStateMachine, snapshot: unknown, event: EventObject): { state: unknown; effects: unknown[] } {
  const [next, actions] = transition(machine, snapshot as never, event as never) as [{ value: unknown; context: unknown; status: unknown }, { type: string; params?: unknown }[]];
  return { state: { value: next.value, context: next.context, status: next.status }, effects: actions.filter((a) => a.type === 'effect').map((a) => a.params) };
}

const stepArb = fc.tuple(fc.nat({ max: 9 }), fc.nat({ max: 1_000 }));

describe('foldEvent', () => {
  it('gives what XState transition() gives, step by step, on random session sequences', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), (plan) => {
        let snapshot: SessionSnapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, MODEL_INPUT).snapshot;
        for (const [kind, pick] of plan) {
          const offered = sessionEvents(snapshot, FULL_GEN);
          const event: SessionEvent = kind <= 6 ? (offered[pick % offered.length] as (typeof offered)[number]).event : sessionNoise(snapshot, pick);
          const expected = xstateStep(sessionMachine, snapshot, event);
          const step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, snapshot, event);
          expect({ state: { value: step.snapshot.value, context: step.snapshot.context, status: step.snapshot.status }, effects: step.effects }).toEqual(expected);
          snapshot = step.snapshot;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('gives what XState transition() gives, step by step, on random writer sequences', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), (plan) => {
        let snapshot: WriterSnapshot = foldStart<typeof writerMachine, WriterEffect>(writerMachine, WRITER_INPUT).snapshot;
        for (const [kind, pick] of plan) {
          const event: WriterEvent = kind <= 6 ? (WRITER_EVENTS[pick % WRITER_EVENTS.length] as (typeof WRITER_EVENTS)[number]).event : writerNoise(pick);
          const expected = xstateStep(writerMachine, snapshot, event);
          const step = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, snapshot, event);
          expect({ state: { value: step.snapshot.value, context: step.snapshot.context, status: step.snapshot.status }, effects: step.effects }).toEqual(expected);
          snapshot = step.snapshot;
        }
      }),
      { numRuns: 150 },
    );
  });
});
