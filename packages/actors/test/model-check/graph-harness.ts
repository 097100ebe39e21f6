/**
 * Machine-independent model-checking helpers on top of `@xstate/graph`: every vertex of the adjacency map, every edge
 * with the concrete path that discovered its source, the library's shortest and simple paths replayed concretely, and
 * reachability of quiescent states.
 */
import type { AdjacencyMap } from '@xstate/graph';
import { createEmptyActor, type AnyActorScope, type AnyStateMachine, type EventObject } from 'xstate';

export interface Labelled<E> {
  readonly label: string;
  readonly event: E;
}

export interface Stepped<S, F> {
  readonly snapshot: S;
  readonly effects: readonly F[];
}

/** One model: how to generate, abstract, step and check. `M` is the per-path monitor. */
export interface Model<S, E extends EventObject, F, M> {
  readonly name: string;
  readonly init: S;
  readonly events: (snapshot: S) => Labelled<E>[];
  serialize(snapshot: S): string;
  step(snapshot: S, event: E): Stepped<S, F>;
  checkState(snapshot: S, check: Checks): void;
  monitor(): M;
  clone(monitor: M): M;
  /** Checks one step against the path so far; mutates the monitor. */
  checkStep(monitor: M, prev: S, event: E, effects: readonly F[], next: S, check: Checks): void;
}

export class Checks {
  count = 0;
  where = '';
  that(cond: boolean, message: string): void {
    this.count++;
    if (!cond) throw new Error(`invariant violated: ${message}\n  path: ${this.where}`);
  }
}

/** Registers generated events under their labels so paths returned by `@xstate/graph` can be replayed by label. */
export class LabelRegistry<E extends object> {
  private readonly labels = new WeakMap<object, string>();
  generator<S>(gen: (s: S) => Labelled<E>[]): (s: S) => E[] {
    return (s) =>
      gen(s).map(({ label, event }) => {
        this.labels.set(event, label);
        return event;
      });
  }
  labelOf(event: object): string {
    const l = this.labels.get(event);
    if (l === undefined) throw new Error(`event without a label: ${JSON.stringify(event)}`);
    return l;
  }
}

/** Every vertex, and every edge checked with the monitor of the concrete discovery path of its source vertex. */
export function checkAdjacency<S extends object, E extends EventObject, F, M>(
  model: Model<S, E, F, M>,
  adj: AdjacencyMap<S, E>,
  registry: LabelRegistry<E>,
  check: Checks,
): { vertices: number; edges: number } {
  const keys = Object.keys(adj) as (keyof typeof adj)[];
  const rootKey = model.serialize(model.init);
  // The adjacency map is built breadth-first: a vertex's representative is the snapshot produced by the transition
  // that discovered it, so representatives form a tree of concrete runs from the initial snapshot.
  const vertexOf = new Map<S, string>();
  for (const k of keys) {
    const v = adj[k];
    if (v !== undefined) vertexOf.set(v.state, k);
  }
  const monitors = new Map<string, { monitor: M; path: string[] }>([[rootKey, { monitor: model.monitor(), path: [] }]]);
  const queue = [rootKey];
  let edges = 0;
  for (let i = 0; i < queue.length; i++) {
    const key = queue[i] as string;
    const vertex = adj[key as keyof typeof adj];
    const here = monitors.get(key);
    if (vertex === undefined || here === undefined) throw new Error(`vertex ${key} missing`);
    check.where = `${model.name}: ${here.path.join(' → ') || '(initial)'}`;
    model.checkState(vertex.state, check);
    check.that(model.serialize(vertex.state) === key, 'the representative does not serialize to its vertex');
    for (const t of Object.values(vertex.transitions)) {
      edges++;
      const label = registry.labelOf(t.event);
      const { snapshot, effects } = model.step(vertex.state, t.event);
      check.that(snapshot === t.state, 'transition not memoised');
      const monitor = model.clone(here.monitor);
      check.where = `${model.name}: ${[...here.path, label].join(' → ')}`;
      model.checkStep(monitor, vertex.state, t.event, effects, snapshot, check);
      model.checkState(snapshot, check);
      const target = vertexOf.get(snapshot);
      if (target !== undefined && !monitors.has(target)) {
        monitors.set(target, { monitor, path: [...here.path, label] });
        queue.push(target);
      }
    }
  }
  check.that(monitors.size === keys.length, `${keys.length - monitors.size} vertices not on the discovery tree`);
  return { vertices: keys.length, edges };
}

export interface PathLike<S, E> {
  readonly steps: readonly { readonly state: S; readonly event: E }[];
}

/**
 * Checks the states `@xstate/graph` put on a path, then replays the path concretely from the initial snapshot by
 * label (ids in events depend on the concrete state) after the `prefix` labels that led to the path's start,
 * checking every step with a fresh monitor and that the replay stays on the path's abstract vertices.
 * Returns the number of steps of the path.
 */
export function replayPath<S, E extends EventObject, F, M>(
  model: Model<S, E, F, M>,
  path: PathLike<S, E>,
  registry: LabelRegistry<E>,
  check: Checks,
  prefix: readonly string[] = [],
  /** The abstraction the path was enumerated with, when it is not the model's own. */
  serialize: (s: S) => string = (s) => model.serialize(s),
): number {
  const [first, ...rest] = path.steps;
  check.that(first?.event.type === 'xstate.init', 'a path does not start with xstate.init');
  const labels = [...prefix, ...rest.map((s) => registry.labelOf(s.event))];
  check.where = `${model.name}: ${labels.join(' → ')}`;
  for (const s of path.steps) model.checkState(s.state, check);
  let snapshot = model.init;
  const monitor = model.monitor();
  for (const [i, label] of labels.entries()) {
    const offered = model.events(snapshot).find((l) => l.label === label);
    check.that(offered !== undefined, `replay: ${label} is not offered in the concrete state`);
    if (offered === undefined) break;
    const next = model.step(snapshot, offered.event);
    model.checkStep(monitor, snapshot, offered.event, next.effects, next.snapshot, check);
    model.checkState(next.snapshot, check);
    const expected = rest[i - prefix.length];
    if (expected !== undefined) check.that(serialize(next.snapshot) === serialize(expected.state), `replay left the path at ${label}`);
    snapshot = next.snapshot;
  }
  return path.steps.length;
}

/**
 * Vertices from which no quiescent vertex can be reached using only edges whose label passes `via`
 * (e.g. only effect results: the runtime always feeds them eventually).
 */
export function stuckVertices<S, E extends EventObject>(
  adj: AdjacencyMap<S, E>,
  serialize: (s: S) => string,
  registry: LabelRegistry<E>,
  quiescent: (s: S) => boolean,
  via: (label: string) => boolean,
): string[] {
  const preds = new Map<string, string[]>();
  const good = new Set<string>();
  for (const [key, v] of Object.entries(adj) as [string, AdjacencyMap<S, E>[keyof AdjacencyMap<S, E>]][]) {
    if (quiescent(v.state)) good.add(key);
    for (const t of Object.values(v.transitions)) {
      if (!via(registry.labelOf(t.event))) continue;
      const to = serialize(t.state);
      const list = preds.get(to) ?? [];
      list.push(key);
      preds.set(to, list);
    }
  }
  const queue = [...good];
  for (let i = 0; i < queue.length; i++) {
    for (const p of preds.get(queue[i] as string) ?? []) {
      if (!good.has(p)) {
        good.add(p);
        queue.push(p);
      }
    }
  }
  return Object.keys(adj).filter((k) => !good.has(k));
}

/**
 * The same fold as `foldEvent` (XState's pure `transition()`: effects are the `effect` actions, collected rather than
 * executed), with one reusable inert actor scope instead of a new one per call, which is most of `transition()`'s cost.
 * The model-check tests compare it with `foldEvent` on sampled edges.
 */
export function effectCollector(): <S, F>(machine: AnyStateMachine, snapshot: S, event: EventObject) => [S, F[]] {
  const actor = createEmptyActor();
  let collected: { type: string; params?: unknown }[] = [];
  const scope = {
    self: actor,
    id: '',
    sessionId: '',
    logger: () => {},
    defer: () => {},
    stopChild: () => {},
    emit: () => {},
    system: actor.system,
    actionExecutor: (a: { type: string; params?: unknown }) => {
      collected.push(a);
    },
  } as unknown as AnyActorScope;
  return <S, F>(machine: AnyStateMachine, snapshot: S, event: EventObject): [S, F[]] => {
    collected = [];
    const next = machine.transition(snapshot as never, event, scope as never) as S;
    const effects = collected.filter((a) => a.type === 'effect').map((a) => a.params as F);
    return [next, effects];
  };
}
