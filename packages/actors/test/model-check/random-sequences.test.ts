import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldEvent, foldStart } from '../../src/fold.ts';
import type { SessionEffect } from '../../src/session-effects.ts';
import { SessionEventSchema, type SessionEvent } from '../../src/session-events.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import type { WriterEffect } from '../../src/writer-effects.ts';
import { WriterEventSchema, type WriterEvent } from '../../src/writer-events.ts';
import { writerMachine } from '../../src/writer-machine.ts';
import { Checks, effectCollector } from './graph-harness.ts';
import {
  FULL_GEN,
  MODEL_INPUT,
  checkSessionState,
  sessionEvents,
  sessionNoise,
  type SessionSnapshot,
} from './session-harness.ts';
import { SessionMonitor } from './session-monitor.ts';
import {
  WRITER_EVENTS,
  WRITER_INPUT,
  WriterMonitor,
  checkWriterState,
  writerNoise,
  type WriterSnapshot,
} from './writer-harness.ts';

/**
 * Random event sequences (fast-check) against the same invariants as the model check: sensible events picked from
 * what the state offers, mixed with nonsense the runtime can still deliver — duplicates of the previous event,
 * settlements, timers and render results with stale or unknown ids, results in the wrong phase, usage that goes down.
 */

const RUNS = 500;
const MAX_EVENTS = 60;

/** One step of a random run: [kind, pick]. Kind 0–5 picks among the offered events, 6 repeats the last, 7–9 is noise. */
const stepArb = fc.tuple(fc.nat({ max: 9 }), fc.nat({ max: 1_000 }));

describe('random event sequences', () => {
  it(`session machine: ${RUNS} runs of up to ${MAX_EVENTS} events keep every invariant`, { timeout: 30_000 }, () => {
    let steps = 0;
    const check = new Checks();
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: MAX_EVENTS, size: 'max' }), fc.boolean(), (plan, fork) => {
        const input = { ...MODEL_INPUT, fork, forkUnavailableReason: fork ? null : 'no writing tool' };
        let snapshot: SessionSnapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
        const monitor = new SessionMonitor();
        const events: SessionEvent[] = [];
        const effects: SessionEffect[][] = [];
        let last: SessionEvent | null = null;
        for (const [kind, pick] of plan) {
          let event: SessionEvent;
          if (kind <= 5) {
            const offered = sessionEvents(snapshot, FULL_GEN);
            event = (offered[pick % offered.length] as (typeof offered)[number]).event;
          } else if (kind === 6 && last !== null && !(snapshot.context.closed && last.type === 'messages.appended')) {
            event = last;
          } else {
            event = sessionNoise(snapshot, pick);
          }
          SessionEventSchema.parse(event);
          check.where = `session: ${[...events, event].map((e) => e.type).join(' → ')}`;
          const next = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, snapshot, event);
          monitor.step(snapshot.context, event, next.effects, next.snapshot.context, check);
          checkSessionState(next.snapshot, check);
          events.push(event);
          effects.push(next.effects);
          snapshot = next.snapshot;
          last = event;
          steps++;
        }
        // Replay determinism: folding the logged events again gives the same states and effects.
        const fold = effectCollector();
        let again: SessionSnapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
        for (const [i, e] of events.entries()) {
          const [next, eff] = fold<SessionSnapshot, SessionEffect>(sessionMachine, again, e);
          check.that(JSON.stringify(eff) === JSON.stringify(effects[i]), `replay produced other effects at event ${i}`);
          again = next;
        }
        check.that(JSON.stringify([again.value, again.context]) === JSON.stringify([snapshot.value, snapshot.context]), 'replay reached another state');
      }),
      { numRuns: RUNS },
    );
    console.log(`random sequences (session): ${RUNS} runs, ${steps} events, ${check.count} invariant checks`);
    expect(steps).toBeGreaterThan(RUNS * 10);
  });

  it(`writer machine: ${RUNS} runs of up to ${MAX_EVENTS} events keep every invariant`, { timeout: 30_000 }, () => {
    let steps = 0;
    const check = new Checks();
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: MAX_EVENTS, size: 'max' }), fc.constantFrom(0, 1, 3), fc.constantFrom(0, 2), (plan, maxReentries, maxContinuations) => {
        const input = { ...WRITER_INPUT, maxReentries, maxContinuations };
        const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
        check.that(JSON.stringify(start.effects) === JSON.stringify([{ kind: 'prepare' }]), 'the start does not prepare once');
        let snapshot: WriterSnapshot = start.snapshot;
        const monitor = new WriterMonitor();
        const labels: string[] = [];
        let last: WriterEvent | null = null;
        for (const [kind, pick] of plan) {
          const event: WriterEvent =
            kind <= 5 ? (WRITER_EVENTS[pick % WRITER_EVENTS.length] as (typeof WRITER_EVENTS)[number]).event : kind === 6 && last !== null ? last : writerNoise(pick);
          WriterEventSchema.parse(event);
          labels.push(event.type);
          check.where = `writer(max ${maxReentries}/${maxContinuations}): ${labels.join(' → ')}`;
          const next = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, snapshot, event);
          monitor.step(snapshot, event, next.effects, next.snapshot, check);
          checkWriterState(next.snapshot, check);
          check.that(next.snapshot.context.reentries <= maxReentries && next.snapshot.context.continuations <= maxContinuations, 'a configured limit was exceeded');
          snapshot = next.snapshot;
          last = event;
          steps++;
        }
        check.that(monitor.settles === (snapshot.status === 'done' ? 1 : 0), 'settled without exactly one settle effect');
      }),
      { numRuns: RUNS },
    );
    console.log(`random sequences (writer): ${RUNS} runs, ${steps} events, ${check.count} invariant checks`);
    expect(steps).toBeGreaterThan(RUNS * 10);
  });
});
