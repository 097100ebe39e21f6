import { getAdjacencyMap, type AdjacencyMap } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { foldStart } from '../../src/fold.ts';
import type { SessionEffect } from '../../src/session-effects.ts';
import type { SessionEvent, SessionInput } from '../../src/session-events.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import type { WriterEffect } from '../../src/writer-effects.ts';
import type { WriterEvent } from '../../src/writer-events.ts';
import { writerMachine } from '../../src/writer-machine.ts';
import { ChartCoverage } from './chart-coverage.ts';
import {
  CATCHUP_GEN,
  CHECKPOINT_OFF_INPUT,
  DELTA_GEN,
  DELTA_INPUT,
  MEMORY_WRITE_OFF_INPUT,
  MODEL_INPUT,
  REBUILD_GEN,
  SLOT_GEN,
  SWITCH_GEN,
  abstractionFor,
  sessionEvents,
  type SessionGenOptions,
  type SessionSnapshot,
} from './session-harness.ts';
import { SessionStepper } from './session-stepper.ts';
import { WRITER_INPUT, WriterStepper, abstractWriter, writerEvents, type WriterSnapshot } from './writer-harness.ts';

/**
 * The charts are what the model check explores: over the same state spaces, every state node is visited and every
 * transition written in each machine is taken — so every named guard passes somewhere and every named action runs.
 */

function cover<S extends { value: unknown }, E extends { type: string }>(coverage: ChartCoverage, adj: AdjacencyMap<S, E>): number {
  let edges = 0;
  for (const v of Object.values(adj) as { state: S; transitions: Record<string, { event: E; state: S }> }[]) {
    coverage.visit(v.state);
    for (const t of Object.values(v.transitions)) {
      coverage.step(v.state, t.event, t.state);
      edges++;
    }
  }
  return edges;
}

describe('chart coverage', () => {
  it('the session machine: every state, transition, named guard and named action is exercised', { timeout: 30_000 }, () => {
    const coverage = new ChartCoverage(sessionMachine);
    const spaces: [SessionInput, SessionGenOptions][] = [
      [MODEL_INPUT, SLOT_GEN],
      [MODEL_INPUT, REBUILD_GEN],
      [CHECKPOINT_OFF_INPUT, SWITCH_GEN],
      [MEMORY_WRITE_OFF_INPUT, SWITCH_GEN],
      [DELTA_INPUT, DELTA_GEN],
      [MODEL_INPUT, CATCHUP_GEN],
      // A closed session given agent input (the runtime refuses it): the one way to close with a writer running while
      // closed. Only what the lifecycle needs is offered.
      [MODEL_INPUT, { ...SLOT_GEN, usages: [500], subagent: false, settlements: ['success'], staleSettlements: false, drain: false, closedInput: true }],
    ];
    let edges = 0;
    for (const [input, gen] of spaces) {
      const stepper = new SessionStepper();
      const init = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
      const adj = getAdjacencyMap(stepper.logic(), {
        fromState: init,
        events: (s: SessionSnapshot): SessionEvent[] => sessionEvents(s, gen).map((l) => l.event),
        serializeState: abstractionFor(gen),
        limit: 100_000,
      });
      edges += cover(coverage, adj);
    }
    const { states, transitions } = coverage.counts();
    console.log(`chart coverage (session): ${states} states, ${transitions} transitions taken over ${edges} edges`);
    expect(coverage.missing()).toEqual({ states: [], transitions: [], guards: [], actions: [] });
  });

  it('the writer machine: every state, transition, named guard and named action is exercised', () => {
    const coverage = new ChartCoverage(writerMachine);
    const stepper = new WriterStepper();
    const init = foldStart<typeof writerMachine, WriterEffect>(writerMachine, WRITER_INPUT).snapshot;
    const adj = getAdjacencyMap(stepper.logic(), {
      fromState: init,
      events: (): WriterEvent[] => writerEvents().map((l) => l.event),
      serializeState: (s: WriterSnapshot) => abstractWriter(s),
      limit: 100_000,
    });
    const edges = cover(coverage, adj);
    const { states, transitions } = coverage.counts();
    console.log(`chart coverage (writer): ${states} states, ${transitions} transitions taken over ${edges} edges`);
    expect(coverage.missing()).toEqual({ states: [], transitions: [], guards: [], actions: [] });
  });
});
