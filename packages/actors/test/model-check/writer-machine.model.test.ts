import { getAdjacencyMap, getShortestPaths, getSimplePaths, type AdjacencyValue } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { foldEvent, foldStart } from '../../src/fold.ts';
import type { WriterEffect } from '../../src/writer-effects.ts';
import type { WriterEvent } from '../../src/writer-events.ts';
import { writerMachine } from '../../src/writer-machine.ts';
import { planWriterEvent } from './oracle/writer-plan.ts';
import {
  Checks,
  LabelRegistry,
  checkAdjacency,
  replayPath,
  stuckVertices,
  type Labelled,
  type Model,
} from './graph-harness.ts';
import {
  WRITER_EVENTS,
  WRITER_INPUT,
  WriterMonitor,
  WriterStepper,
  abstractWriter,
  checkWriterState,
  writerEvents,
  type WriterSnapshot,
} from './writer-harness.ts';

/**
 * Model check of one writer run: prepare, model turns with tools, empty / reasoning-only stops,
 * validation verdicts with re-entries, commit, every failure kind, cancellation, and results that arrive in the wrong
 * phase or twice. Every event is offered in every state.
 */
describe('writer machine model check', () => {
  it('holds the invariants on every reachable state, every edge, every shortest and every simple path', { timeout: 30_000 }, () => {
    const stepper = new WriterStepper();
    const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, WRITER_INPUT);
    expect(start.effects).toEqual([{ kind: 'prepare' }]);
    const model: Model<WriterSnapshot, WriterEvent, WriterEffect, WriterMonitor> = {
      name: 'writer',
      init: start.snapshot,
      events: writerEvents,
      serialize: abstractWriter,
      step: (s, e) => stepper.step(s, e),
      checkState: checkWriterState,
      monitor: () => new WriterMonitor(),
      clone: (m) => m.clone(),
      checkStep: (m, prev, e, effects, next, check) => m.step(prev, e, effects, next, check),
    };
    const registry = new LabelRegistry<WriterEvent>();
    const logic = stepper.logic();
    const options = { fromState: model.init, events: registry.generator(model.events), serializeState: abstractWriter, limit: 100_000 };
    const check = new Checks();

    const adj = getAdjacencyMap(logic, options);
    const { vertices, edges } = checkAdjacency(model, adj, registry, check);
    // Every run can settle without being cancelled: effect results alone lead to `settled`.
    expect(stuckVertices(adj, abstractWriter, registry, (s) => s.status === 'done', (l) => l !== 'cancel')).toEqual([]);
    // Every outcome and failure kind is reachable.
    const outcomes = new Set(Object.values(adj).map((v) => {
      const { outcome, failure } = (v as { state: WriterSnapshot }).state.context;
      return `${String(outcome)}:${failure?.kind ?? ''}`;
    }));
    for (const o of ['success:', 'skipped:', 'cancelled:cancelled', 'failure:transient', 'failure:overflow', 'failure:auth', 'failure:validation', 'failure:other']) {
      expect(outcomes, o).toContain(o);
    }

    const shortest = getShortestPaths(logic, options);
    let steps = 0;
    for (const p of shortest) steps += replayPath(model, p, registry, check);
    // Simple paths, one writer round at a time (a round ends at the next re-entry): the first round from the start,
    // the second, and the last one where the limits bite. Inside a round the LLM-call count is part of the vertex,
    // so tool loops appear; every event is offered everywhere.
    let simple = 0;
    for (const round of [0, 1, 3]) {
      const prefix = round === 0 ? [] : ['prepared', ...Array.from({ length: round }, () => ['reply:text', 'validation:errors']).flat()];
      let from = model.init;
      for (const label of prefix) from = stepper.step(from, (WRITER_EVENTS.find((l) => l.label === label) as Labelled<WriterEvent>).event).snapshot;
      const calls0 = from.context.calls;
      const keys = new WeakMap<object, string>();
      const serializeState = (s: WriterSnapshot) => {
        let k = keys.get(s);
        if (k === undefined) {
          const c = s.context;
          k = JSON.stringify([c.phase, c.reentries, c.continuations, Math.min(c.calls - calls0, 2), c.outcome, c.failure?.kind ?? null]);
          keys.set(s, k);
        }
        return k;
      };
      const paths = getSimplePaths(logic, { fromState: from, events: registry.generator(model.events), serializeState, stopWhen: (s) => s.context.reentries > round, limit: 100_000 });
      for (const p of paths) steps += replayPath(model, p, registry, check, prefix, serializeState);
      simple += paths.length;
    }

    // The fast fold equals the production fold on every edge, and both equal the reducer the machine replaced.
    for (const v of Object.values(adj) as AdjacencyValue<WriterSnapshot, WriterEvent>[]) {
      for (const t of Object.values(v.transitions)) {
        const real = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, v.state, t.event);
        const fast = stepper.step(v.state, t.event);
        check.that(JSON.stringify([real.snapshot.value, real.snapshot.context, real.effects]) === JSON.stringify([fast.snapshot.value, fast.snapshot.context, fast.effects]), 'fast fold differs from foldEvent');
        // A validation the writer left unanswered ends the run early, which the reducer predates: not compared.
        if (t.event.type === 'validation.completed' && t.event.unchanged === true) continue;
        const oracle = planWriterEvent(v.state.context, t.event);
        check.that(JSON.stringify([real.snapshot.context, real.effects]) === JSON.stringify([oracle.context, oracle.effects]), 'the machine differs from the reducer it replaced');
      }
    }
    const paths = shortest.length + simple + edges;
    console.log(`writer machine: ${paths} paths (${shortest.length} shortest, ${simple} simple, ${edges} edge-extended; ${steps} replayed steps), ${vertices} states, ${check.count} invariant checks`);
    expect(vertices).toBeGreaterThan(50);
    expect(simple).toBeGreaterThan(2_000);
    expect(check.count).toBeGreaterThan(100_000);
  });

  it('the checks reject broken steps (so they cannot pass vacuously)', { timeout: 30_000 }, () => {
    const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, WRITER_INPUT).snapshot;
    const settled = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, start, { type: 'writer.cancel', reason: 'x' });
    const cancel: WriterEvent = { type: 'writer.cancel', reason: 'x' };
    const m = new WriterMonitor();
    m.step(start, cancel, settled.effects, settled.snapshot, new Checks());
    expect(() => m.step(start, cancel, settled.effects, settled.snapshot, new Checks())).toThrow('settled twice');
    expect(() => checkWriterState({ ...settled.snapshot, value: 'calling' }, new Checks())).toThrow('disagrees');
    const calling = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, start, { type: 'writer.prepared' }).snapshot;
    expect(() => new WriterMonitor().step(calling, { type: 'tools.completed', results: [] }, [{ kind: 'validate' }], calling, new Checks())).toThrow('changed something');
  });
});
