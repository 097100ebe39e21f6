import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldEvent, foldStart } from '../../src/fold.ts';
import { INDEX_CHUNK } from '../../src/index-list.ts';
import { slotOf } from '../../src/session-context.ts';
import type { SessionEffect } from '../../src/session-effects.ts';
import type { SessionEvent, SessionInput } from '../../src/session-events.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import type { WriterEffect } from '../../src/writer-effects.ts';
import type { WriterEvent, WriterInput } from '../../src/writer-events.ts';
import { writerMachine } from '../../src/writer-machine.ts';
import { Checks } from './graph-harness.ts';
import { departsFromOracle } from './oracle-departures.ts';
import { oracleContext, type SessionContext as OracleSessionContext } from './oracle/session-context.ts';
import { planSessionEvent } from './oracle/session-plan.ts';
import {
  initialWriterContext,
  planWriterEvent,
  type WriterContext as OracleWriterContext,
} from './oracle/writer-plan.ts';
import {
  FULL_GEN,
  MODEL_INPUT,
  USAGES,
  appendEvent,
  checkSessionState,
  sessionEvents,
  sessionNoise,
  type SessionSnapshot,
} from './session-harness.ts';
import {
  WRITER_EVENTS,
  WRITER_INPUT,
  checkWriterState,
  fittingWriterEvent,
  writerNoise,
  type WriterSnapshot,
} from './writer-harness.ts';

/**
 * The machines against the reducer they replaced (`oracle/`, a frozen copy): long random event sequences are folded
 * through the machine with `foldEvent` and, independently, through the oracle; at every step the two contexts and the
 * two effect lists must be the same data, in the same order and with the same keys (recorded logs store the effects
 * and replay compares them field by field). The oracle keeps its own context, so a divergence is never masked by
 * feeding the machine's state back into it.
 */

const SESSION_RUNS = 500;
const WRITER_RUNS = 300;
/** Long session runs: hundreds of appends, so the machine's index list spans several chunks. */
const LONG_RUNS = 10;
const REBUILD_CHAIN = /^(rebuild:|rendered:(ok|failed)$|compacted$|timer:current$|settle:(success|failure:transient)$)/;

/** Same data: deep strict equality (an `undefined` key is not an absent one) and the same key order. */
function same(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);
}

/** One step of a random run: [kind, pick]. Kind 0–5 picks among the offered events, 6 repeats the last, 7–9 is noise. */
const stepArb = fc.tuple(fc.nat({ max: 9 }), fc.nat({ max: 1_000 }));

/** Small inputs around the model-check one: switches, ladders, tail policies and fork/delta mode vary. */
const sessionInputArb: fc.Arbitrary<SessionInput> = fc
  .record({
    fork: fc.boolean(),
    checkpointEnabled: fc.constantFrom(true, true, true, false),
    memoryWriteDisabled: fc.constantFrom(false, false, false, true),
    thresholds: fc.constantFrom<number[]>([1000, 2000], [1000], [], [600, 1200, 2400]),
    tail: fc.constantFrom(MODEL_INPUT.tail, { minTokens: 3, maxTokens: 6, minTextMessages: 2 }),
  })
  .map(({ fork, ...rest }) => ({ ...MODEL_INPUT, ...rest, fork, forkUnavailableReason: fork ? null : 'no writing tool' }));

/** A long run's plan that appends 700 times, then offers what carries a rebuild through (kind 8) 200 times. */
const LONG_EXAMPLE_PLAN: [number, number][] = [...Array.from({ length: 700 }, (_, i): [number, number] => [0, i]), ...Array.from({ length: 200 }, (_, i): [number, number] => [8, i])];
const LONG_EXAMPLE_INPUT: SessionInput = { ...MODEL_INPUT, fork: true, forkUnavailableReason: null, checkpointEnabled: true, memoryWriteDisabled: false, thresholds: [1000, 2000] };

describe('machines equal the reducer they replaced', () => {
  it(`session machine: ${SESSION_RUNS} runs of 50–150 events give the oracle's context and effects at every step`, { timeout: 60_000 }, () => {
    let steps = 0;
    let effects = 0;
    let closedAndClosing = 0;
    let departures = 0;
    const check = new Checks();
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 50, maxLength: 150 }), sessionInputArb, fc.boolean(), (plan, input, closedInput) => {
        const gen = { ...FULL_GEN, closedInput };
        let snapshot: SessionSnapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
        // The oracle keeps the index as one array: the machine's context is compared with its index flattened.
        let oracle: OracleSessionContext = oracleContext(snapshot.context);
        const trail: string[] = [];
        let last: SessionEvent | null = null;
        for (const [kind, pick] of plan) {
          let event: SessionEvent;
          if (kind <= 5) {
            // Behaviours the reducer predates are not offered here (they part ways with it on purpose).
            const offered = sessionEvents(snapshot, gen).filter((l) => departsFromOracle(snapshot.context, l.event) === null);
            event = (offered[pick % offered.length] as (typeof offered)[number]).event;
          } else if (kind === 6 && last !== null) {
            event = last;
          } else {
            event = sessionNoise(snapshot, pick);
          }
          // A repeated or noise event may still be one: it is skipped.
          if (departsFromOracle(snapshot.context, event) !== null) {
            departures++;
            continue;
          }
          trail.push(event.type);
          check.where = `session: ${trail.join(' → ')}`;
          const next = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, snapshot, event);
          const expected = planSessionEvent(oracle, event);
          check.that(same(next.effects, expected.effects), `effects differ from the oracle's\n  machine: ${JSON.stringify(next.effects)}\n  oracle:  ${JSON.stringify(expected.effects)}`);
          const machine = oracleContext(next.snapshot.context);
          check.that(same(machine, expected.context), `context differs from the oracle's\n  machine: ${JSON.stringify(machine)}\n  oracle:  ${JSON.stringify(expected.context)}`);
          if (!closedInput) checkSessionState(next.snapshot, check);
          else {
            // Input to a closed session (which the runtime refuses) can start a writer there, and a close then makes the
            // session closed and closing at once, which the invariants rule out. The regions still follow the context;
            // the lifecycle says `closing` while a close waits (the old mirror said `closed`).
            const c = next.snapshot.context;
            const v = next.snapshot.value;
            const lifecycle = c.closeRequestId !== null ? 'closing' : c.closed ? 'closed' : 'active';
            check.that(v.slot === slotOf(c) && v.rebuild === (c.rebuild?.phase ?? 'idle') && v.lifecycle === lifecycle, `regions ${JSON.stringify(v)} disagree with the context`);
            if (c.closed && c.closeRequestId !== null) closedAndClosing++;
          }
          snapshot = next.snapshot;
          oracle = expected.context;
          last = event;
          steps++;
          effects += next.effects.length;
        }
      }),
      { numRuns: SESSION_RUNS },
    );
    console.log(`reducer equivalence (session): ${SESSION_RUNS} runs (${departures} events skipped: deliberate departures), ${steps} events (${closedAndClosing} closed and closing), ${effects} effects, ${check.count} checks`);
    expect(steps).toBeGreaterThanOrEqual(SESSION_RUNS * 45);
  });

  it(`session machine: ${LONG_RUNS} long runs whose index spans several chunks give the oracle's context and effects at every step`, { timeout: 120_000 }, () => {
    // Mostly appends, so the index grows past several chunks; now and then any offered event (writers, rebuilds that
    // re-base a long index, drains, closes) or noise.
    let steps = 0;
    let longest = 0;
    let longRebases = 0;
    let departures = 0;
    const check = new Checks();
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 600, maxLength: 900 }), sessionInputArb, (plan, input) => {
        let snapshot: SessionSnapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
        let oracle: OracleSessionContext = oracleContext(snapshot.context);
        const trail: string[] = [];
        for (const [kind, pick] of plan) {
          const c = snapshot.context;
          let event: SessionEvent;
          if (kind <= 6 && !c.closed) event = appendEvent(c, USAGES[pick % USAGES.length] as number, pick % 7 !== 0);
          else if (kind <= 8) {
            // Once the index spans more than two chunks, kind 8 favours what carries a rebuild through (requests,
            // settlements, timers, results), so long indexes get re-based.
            const offered = sessionEvents(snapshot, FULL_GEN).filter((l) => departsFromOracle(c, l.event) === null);
            const rebuilding = offered.filter((l) => REBUILD_CHAIN.test(l.label));
            const from = kind === 8 && c.index.length > 2 * INDEX_CHUNK && rebuilding.length > 0 ? rebuilding : offered;
            event = (from[pick % from.length] as (typeof from)[number]).event;
          } else event = sessionNoise(snapshot, pick);
          if (departsFromOracle(c, event) !== null) {
            departures++;
            continue;
          }
          trail.push(event.type);
          check.where = `session (long): ${trail.slice(-30).join(' → ')}`;
          const next = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, snapshot, event);
          const expected = planSessionEvent(oracle, event);
          check.that(same(next.effects, expected.effects), `effects differ from the oracle's\n  machine: ${JSON.stringify(next.effects)}\n  oracle:  ${JSON.stringify(expected.effects)}`);
          const machine = oracleContext(next.snapshot.context);
          check.that(same(machine, expected.context), `context differs from the oracle's\n  machine: ${JSON.stringify(machine)}\n  oracle:  ${JSON.stringify(expected.context)}`);
          checkSessionState(next.snapshot, check);
          const after = next.snapshot.context.index;
          longest = Math.max(longest, after.length);
          if (c.index.length > INDEX_CHUNK && after.length < c.index.length) longRebases++;
          snapshot = next.snapshot;
          oracle = expected.context;
          steps++;
        }
      }),
      // Besides the random runs, one that surely grows the index past two chunks and then carries rebuilds through it,
      // so the figures asserted below never depend on what the random runs happened to do (closing early, say).
      { numRuns: LONG_RUNS, examples: [[LONG_EXAMPLE_PLAN, LONG_EXAMPLE_INPUT]] },
    );
    console.log(`reducer equivalence (session, long): ${LONG_RUNS} random runs and a fixed one (${departures} events skipped: deliberate departures), ${steps} events, index up to ${longest} entries, ${longRebases} re-bases of a multi-chunk index, ${check.count} checks`);
    expect(longest).toBeGreaterThan(2 * INDEX_CHUNK);
    expect(longRebases).toBeGreaterThan(0);
  });

  it(`writer machine: ${WRITER_RUNS} runs of 100–200 events give the oracle's context and effects at every step`, { timeout: 60_000 }, () => {
    let steps = 0;
    let effects = 0;
    let writers = 0;
    const check = new Checks();
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 100, maxLength: 200 }), fc.constantFrom(0, 1, 2, 3), fc.constantFrom(0, 1, 2), (plan, maxReentries, maxContinuations) => {
        const input: WriterInput = { ...WRITER_INPUT, maxReentries, maxContinuations };
        let snapshot: WriterSnapshot = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input).snapshot;
        let oracle: OracleWriterContext = initialWriterContext(input);
        let trail: string[] = [];
        let last: WriterEvent | null = null;
        let afterSettle = 0;
        for (const [kind, pick] of plan) {
          if (trail.length === 0) {
            // A new writer run (the previous one settled and was fed a few late results).
            const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
            check.that(same(start.effects, [{ kind: 'prepare' }]), 'the start does not prepare once');
            snapshot = start.snapshot;
            oracle = initialWriterContext(input);
            check.that(same(snapshot.context, oracle), 'the initial context differs from the oracle’s');
            writers++;
          }
          // Kind 0–6: a result that fits the phase; 7: any result; 8: the last one again; 9: noise.
          const event: WriterEvent =
            kind <= 6
              ? fittingWriterEvent(snapshot, pick)
              : kind === 7
                ? (WRITER_EVENTS[pick % WRITER_EVENTS.length] as (typeof WRITER_EVENTS)[number]).event
                : kind === 8 && last !== null
                  ? last
                  : writerNoise(pick);
          // A validation the writer left unanswered ends the run early, which the reducer predates: skipped.
          if (event.type === 'validation.completed' && event.unchanged === true) continue;
          trail.push(event.type);
          check.where = `writer(max ${maxReentries}/${maxContinuations}): ${trail.join(' → ')}`;
          const next = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, snapshot, event);
          const expected = planWriterEvent(oracle, event);
          check.that(same(next.effects, expected.effects), `effects differ from the oracle's\n  machine: ${JSON.stringify(next.effects)}\n  oracle:  ${JSON.stringify(expected.effects)}`);
          check.that(same(next.snapshot.context, expected.context), `context differs from the oracle's\n  machine: ${JSON.stringify(next.snapshot.context)}\n  oracle:  ${JSON.stringify(expected.context)}`);
          checkWriterState(next.snapshot, check);
          snapshot = next.snapshot;
          oracle = expected.context;
          last = event;
          steps++;
          effects += next.effects.length;
          if (snapshot.status === 'done' && ++afterSettle > 2) {
            trail = [];
            afterSettle = 0;
          }
        }
      }),
      { numRuns: WRITER_RUNS },
    );
    console.log(`reducer equivalence (writer): ${WRITER_RUNS} runs, ${writers} writers, ${steps} events, ${effects} effects, ${check.count} checks`);
    expect(steps).toBeGreaterThanOrEqual(WRITER_RUNS * 100);
  });
});
