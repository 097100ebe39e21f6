/**
 * Coverage of a state chart by explored transitions: which state nodes were visited, which transitions (as written in
 * the machine config) were taken, and so which named guards passed and which named actions ran.
 */
import type { AnyStateMachine, AnyStateNode, EventObject } from 'xstate';

type TransitionDef = ReturnType<AnyStateMachine['getTransitionData']>[number];

/** Names of the named guards a guard refers to (inside `and` / `or` / `not`; `stateIn` names none). */
function guardNames(guard: unknown): string[] {
  if (typeof guard === 'string') return [guard];
  if (typeof guard === 'object' && guard !== null && 'type' in guard) return [String(guard.type)];
  if (typeof guard === 'function' && 'guards' in guard && Array.isArray(guard.guards)) return (guard.guards as unknown[]).flatMap(guardNames);
  return [];
}

function actionNames(actions: readonly unknown[]): string[] {
  return actions.flatMap((a) => (typeof a === 'string' ? [a] : typeof a === 'object' && a !== null && 'type' in a ? [String(a.type)] : []));
}

function nodesOf(node: AnyStateNode): AnyStateNode[] {
  return [node, ...Object.values(node.states as Record<string, AnyStateNode>).flatMap(nodesOf)];
}

const describeTransition = (t: TransitionDef): string =>
  `${t.source.id} --${t.eventType}${t.guard === undefined ? '' : ` [${guardNames(t.guard).join(' & ') || 'stateIn'}]`}--> ${t.target?.map((n) => n.id).join(', ') ?? '(stays)'}`;

export class ChartCoverage {
  private readonly taken = new Set<TransitionDef>();
  private readonly visited = new Set<string>();

  constructor(private readonly machine: AnyStateMachine) {}

  /** Records the transitions `event` takes from `snapshot`, and the states of the snapshot it leads to. */
  step<S extends { value: unknown }>(snapshot: S, event: EventObject, next: S): void {
    for (const t of this.machine.getTransitionData(snapshot as never, event)) this.taken.add(t);
    this.visit(next);
  }

  visit(snapshot: { value: unknown }): void {
    const walk = (prefix: string, value: unknown): void => {
      if (typeof value === 'string') this.visited.add(`${prefix}.${value}`);
      else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) walk(`${prefix}.${k}`, v);
    };
    walk(this.machine.id, snapshot.value);
  }

  /** What the exploration never reached: atomic states, transitions, named guards that never passed, named actions never run. */
  missing(): { states: string[]; transitions: string[]; guards: string[]; actions: string[] } {
    const nodes = nodesOf(this.machine.root);
    const states = nodes.filter((n) => n.type === 'atomic' || n.type === 'final').map((n) => n.id).filter((id) => !this.visited.has(id));
    const all = nodes.flatMap((n) => [...n.transitions.values()].flat());
    const transitions = all.filter((t) => !this.taken.has(t)).map(describeTransition);
    const passed = new Set([...this.taken].flatMap((t) => guardNames(t.guard)));
    const ran = new Set([
      ...[...this.taken].flatMap((t) => actionNames(t.actions)),
      ...nodes.filter((n) => this.visited.has(n.id) || n === this.machine.root).flatMap((n) => actionNames(n.entry)),
    ]);
    const impl = this.machine.implementations as { guards: Record<string, unknown>; actions: Record<string, unknown> };
    return {
      states,
      transitions,
      guards: Object.keys(impl.guards).filter((g) => !passed.has(g)),
      // `effect` is enqueued by the named actions, never named in the chart.
      actions: Object.keys(impl.actions).filter((a) => a !== 'effect' && !ran.has(a)),
    };
  }

  counts(): { states: number; transitions: number } {
    return { states: this.visited.size, transitions: this.taken.size };
  }
}
