import { getAdjacencyMap, getShortestPaths, getSimplePaths, type AdjacencyValue } from '@xstate/graph';
import { afterAll, describe, expect, it } from 'vitest';
import { foldEvent, foldStart } from '../../src/fold.ts';
import { indexFromEntries } from '../../src/index-list.ts';
import type { SessionEffect } from '../../src/session-effects.ts';
import type { SessionEvent, SessionInput } from '../../src/session-events.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import { oracleContext } from './oracle/session-context.ts';
import { departsFromOracle } from './oracle-departures.ts';
import { planSessionEvent } from './oracle/session-plan.ts';
import { Checks, LabelRegistry, checkAdjacency, replayPath, stuckVertices, type Model } from './graph-harness.ts';
import {
  CATCHUP_GEN,
  CHECKPOINT_OFF_INPUT,
  DELTA_GEN,
  DELTA_INPUT,
  FULL_GEN,
  MEMORY_WRITE_OFF_INPUT,
  MODEL_INPUT,
  REBUILD_GEN,
  SLOT_GEN,
  SWITCH_GEN,
  abstractSession,
  abstractionFor,
  checkSessionState,
  sessionEvents,
  type SessionGenOptions,
  type SessionSnapshot,
} from './session-harness.ts';
import { SessionMonitor } from './session-monitor.ts';
import { SessionStepper } from './session-stepper.ts';

/**
 * Model check of the session machine. Inputs are tiny (rungs 1 000 / 2 000, usable 3 000,
 * maxAllowed 2 500, a one-message tail) and the context is abstracted to what decisions depend on, so the reachable
 * graph is finite. Every vertex and every edge of the adjacency map is checked, every edge with the concrete run that
 * discovered its source (so path invariants — settle once, watermark frozen at start, drain, one reply per rebuild —
 * are tracked through effects); the library's shortest paths and depth-bounded simple paths are replayed concretely.
 */

function sessionModel(name: string, input: SessionInput, gen: SessionGenOptions, stepper = new SessionStepper()) {
  const init = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
  const model: Model<SessionSnapshot, SessionEvent, SessionEffect, SessionMonitor> = {
    name,
    init,
    events: (s) => sessionEvents(s, gen),
    serialize: abstractionFor(gen),
    step: (s, e) => stepper.step(s, e),
    checkState: checkSessionState,
    monitor: () => new SessionMonitor(),
    clone: (m) => m.clone(),
    checkStep: (m, prev, e, effects, next, check) => m.step(prev.context, e, effects, next.context, check),
  };
  return { model, registry: new LabelRegistry<SessionEvent>(), stepper };
}

/** Labels of effect results the runtime always delivers eventually (settlements, the armed timer, render results). */
const RESULT = /^(settle:(success|failure:.*|cancelled|skipped)|timer:current|rendered:(ok|failed)|compacted)$/;
const quiescent = (s: SessionSnapshot) => s.context.writer === null && s.context.rebuild === null;

const totals = { states: 0, edges: 0, paths: 0, steps: 0, checks: 0 };

afterAll(() => {
  console.log(
    `session machine: ${totals.paths} paths (${totals.steps} steps), ${totals.states} states, ${totals.edges} edges, ${totals.checks} invariant checks`,
  );
});

/** Adjacency map + every edge + shortest paths + liveness for one generator. */
function exploreAll(name: string, input: SessionInput, gen: SessionGenOptions) {
  const { model, registry, stepper } = sessionModel(name, input, gen);
  const logic = stepper.logic();
  const serialize = abstractionFor(gen);
  const options = { fromState: model.init, events: registry.generator(model.events), serializeState: serialize, limit: 100_000 };
  const check = new Checks();
  const adj = getAdjacencyMap(logic, options);
  const { vertices, edges } = checkAdjacency(model, adj, registry, check);
  // Every state can get back to "no writer, no rebuild" with effect results alone: writers settle, rebuilds answer,
  // a drain terminates.
  expect(stuckVertices(adj, serialize, registry, quiescent, (l) => RESULT.test(l))).toEqual([]);
  const shortest = getShortestPaths(logic, options);
  let steps = 0;
  for (const p of shortest) steps += replayPath(model, p, registry, check);
  // The fast fold used by the stepper is the machine's real fold: compare with `foldEvent` on a sample of edges.
  // Every edge gives the context and effects of the reducer the machine replaced (`oracle/`).
  let sampled = 0;
  for (const [i, v] of Object.values(adj).entries() as IterableIterator<[number, AdjacencyValue<SessionSnapshot, SessionEvent>]>) {
    for (const t of Object.values(v.transitions)) {
      // A behaviour the reducer predates is checked by the invariants, not against it.
      if (departsFromOracle(v.state.context, t.event) !== null) continue;
      const step = stepper.step(v.state, t.event);
      const oracle = planSessionEvent(oracleContext(v.state.context), t.event);
      check.that(JSON.stringify([oracleContext(step.snapshot.context), step.effects]) === JSON.stringify([oracle.context, oracle.effects]), 'the machine differs from the reducer it replaced');
    }
    if (i % 23 !== 0) continue;
    for (const t of Object.values(v.transitions)) {
      const real = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, v.state, t.event);
      const fast = stepper.step(v.state, t.event);
      check.that(JSON.stringify([real.snapshot.value, real.snapshot.context, real.effects]) === JSON.stringify([fast.snapshot.value, fast.snapshot.context, fast.effects]), 'fast fold differs from foldEvent');
      sampled++;
    }
  }
  console.log(`session machine (${name}): ${vertices} states, ${edges} edges, ${shortest.length} shortest paths (${steps} steps), ${sampled} edges re-folded, ${check.count} invariant checks`);
  totals.states += vertices;
  totals.edges += edges;
  totals.paths += shortest.length + edges;
  totals.steps += steps;
  totals.checks += check.count;
  return { vertices, edges, paths: shortest.length, checks: check.count };
}

/**
 * All simple paths of up to `depth` events over a family of labels, from the state reached by `prefix`
 * (depth is part of the vertex, so the bounded graph is a DAG and its simple paths are all event sequences).
 */
function exploreSimple(name: string, input: SessionInput, family: RegExp, depth: number, prefix: readonly string[] = []) {
  const { model, registry, stepper } = sessionModel(name, input, FULL_GEN);
  let from = model.init;
  for (const label of prefix) {
    const e = model.events(from).find((l) => l.label === label);
    if (e === undefined) throw new Error(`prefix label ${label} not offered`);
    from = stepper.step(from, e.event).snapshot;
  }
  const depthOf = new WeakMap<object, number>([[from, 0]]);
  const keys = new WeakMap<object, string>();
  const logic = Object.create(sessionMachine) as typeof sessionMachine;
  Object.defineProperty(logic, 'transition', {
    value: (s: SessionSnapshot, e: SessionEvent) => {
      let next = stepper.step(s, e).snapshot;
      // An event no state takes leaves the very same snapshot; a copy gives it the next depth as a vertex of its own,
      // so the bounded graph stays a DAG whose simple paths are all the event sequences.
      if (next === s) next = { ...s };
      if (!depthOf.has(next)) depthOf.set(next, (depthOf.get(s) ?? 0) + 1);
      return next;
    },
  });
  const serializeState = (s: SessionSnapshot) => {
    let k = keys.get(s);
    if (k === undefined) {
      k = `${abstractSession(s)}#${depthOf.get(s) ?? 0}`;
      keys.set(s, k);
    }
    return k;
  };
  const paths = getSimplePaths(logic, {
    fromState: from,
    events: registry.generator((s: SessionSnapshot) => model.events(s).filter((l) => family.test(l.label))),
    serializeState,
    stopWhen: (s) => (depthOf.get(s) ?? 0) >= depth,
    limit: 100_000,
  });
  // Replay from the initial snapshot: the prefix, then the path.
  const check = new Checks();
  let steps = 0;
  for (const p of paths) steps += replayPath(model, p, registry, check, prefix);
  console.log(`session machine (${name}): ${paths.length} simple paths of ≤ ${depth} events (${steps} steps), ${check.count} invariant checks`);
  totals.paths += paths.length;
  totals.steps += steps;
  totals.checks += check.count;
  return { paths: paths.length, checks: check.count };
}


describe('session machine model check', () => {
  it('thresholds, slot, queue, settlement, drain and close: every state, edge and shortest path', { timeout: 30_000 }, () => {
    const r = exploreAll('slot', MODEL_INPUT, SLOT_GEN);
    expect(r.vertices).toBeGreaterThan(500);
    expect(r.edges).toBeGreaterThan(8_000);
    expect(r.checks).toBeGreaterThan(200_000);
  });

  it('rebuild decision chain with timers, renders, compaction and late results: every state, edge and shortest path', { timeout: 30_000 }, () => {
    const r = exploreAll('rebuild', MODEL_INPUT, REBUILD_GEN);
    expect(r.vertices).toBeGreaterThan(700);
    expect(r.edges).toBeGreaterThan(12_000);
    expect(r.checks).toBeGreaterThan(300_000);
  });

  it('catch-up writers after fitted rebuilds, and the backoff after writers failed in a row: every state and edge', { timeout: 60_000 }, () => {
    const r = exploreAll('catch-up', MODEL_INPUT, CATCHUP_GEN);
    expect(r.vertices).toBeGreaterThan(1_000);
    expect(r.edges).toBeGreaterThan(15_000);
  });

  it('switches and delta mode: checkpointing off, memory writes off, fork unavailable', { timeout: 30_000 }, () => {
    const off = exploreAll('checkpoint off', CHECKPOINT_OFF_INPUT, SWITCH_GEN);
    const noWrite = exploreAll('memory writes off', MEMORY_WRITE_OFF_INPUT, SWITCH_GEN);
    const delta = exploreAll('delta mode', DELTA_INPUT, DELTA_GEN);
    expect(off.vertices).toBeGreaterThan(5);
    expect(noWrite.vertices).toBeGreaterThan(5);
    expect(delta.vertices).toBeGreaterThan(150);
  });

  it('all event sequences of bounded length in each family', { timeout: 30_000 }, () => {
    const queue = exploreSimple('queue', MODEL_INPUT, /^(checkpoint|settle:(success|failure:transient|cancelled|duplicate|stale)|drain|resume|append:1100)$/, 4, ['append:500']);
    const thresholds = exploreSimple('thresholds', MODEL_INPUT, /^(append:(500|1100|2100|2500|subagent)|settle:(success|failure:transient))$/, 4);
    const rebuild = exploreSimple('rebuild', MODEL_INPUT, /^(rebuild:(overflow:file|overflow:nofile|manual:nofile)|timer:(current|stale|old)|rendered:(ok|failed|late)|compacted|abandoned|settle:(success|failure:transient|unknown)|checkpoint)$/, 4, ['append:500']);
    const close = exploreSimple('close', MODEL_INPUT, /^(close|resume|checkpoint|settle:(success|cancelled|duplicate)|timer:(close|close-late)|drain|rebuild:overflow:nofile|timer:current|compacted)$/, 4, ['append:500']);
    expect(queue.paths + thresholds.paths + rebuild.paths + close.paths).toBeGreaterThan(3_000);
  });

  it('the checks reject broken steps (so they cannot pass vacuously)', { timeout: 30_000 }, () => {
    const ctx = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, MODEL_INPUT).snapshot.context;
    const running = { ...ctx, writerSeq: 1, writer: { writerId: 's-w1', boundary: 'm1', mode: 'fork' as const, trigger: 'manual' as const, rung: null, firedAt: 0 } };
    const append: SessionEvent = { type: 'messages.appended', messages: [] };
    const start = (id: string) => ({ kind: 'writer.start' as const, writerId: id, boundary: 'm1', mode: 'fork' as const, deltaFrom: null, trigger: 'manual' as const, watermark: null });
    const broken: [string, () => void][] = [
      ['watermark moved', () => new SessionMonitor().step(ctx, append, [], { ...ctx, watermark: 'm1' }, new Checks())],
      ['2 writers started', () => new SessionMonitor().step(ctx, append, [start('s-w1'), start('s-w2')], running, new Checks())],
      ['writer s-w1 started twice', () => {
        const m = new SessionMonitor();
        m.step(ctx, append, [start('s-w1')], { ...running, index: indexFromEntries([{ id: 'm1', role: 'user', tokens: 1, textual: true, finished: false, toolCallIds: [] }]) }, new Checks());
        m.step(ctx, append, [start('s-w1')], running, new Checks());
      }],
      ['slot region idle disagrees', () => checkSessionState({ value: { slot: 'idle', lifecycle: 'active' }, context: running } as unknown as SessionSnapshot, new Checks())],
      ['rebuild rb1 answered without a request', () =>
        new SessionMonitor().step(ctx, { type: 'timer.fired', timerId: 't' }, [{ kind: 'rebuild.reply', requestId: 'rb1', outcome: 'rebuilt', coveredUpTo: null, statusText: '', withContext: true }], ctx, new Checks())],
    ];
    for (const [message, run] of broken) expect(run, message).toThrow(message);
  });
});
