import { initialTransition, transition, type AnyStateMachine, type SnapshotFrom, type EventFromLogic, type InputFrom } from 'xstate';

/** The result of folding one event through a machine with the pure XState `transition()`. */
export interface FoldStep<TSnapshot, TEffect> {
  readonly snapshot: TSnapshot;
  readonly effects: TEffect[];
}

/** Collects the `effect` actions (data) a transition produced; other actions (assign, …) are internal. */
function effectsOf<TEffect>(actions: readonly { type: string; params?: unknown }[]): TEffect[] {
  const out: TEffect[] = [];
  for (const a of actions) if (a.type === 'effect') out.push(a.params as TEffect);
  return out;
}

/** Starts a machine from its input without running anything. */
export function foldStart<M extends AnyStateMachine, TEffect>(machine: M, input: InputFrom<M>): FoldStep<SnapshotFrom<M>, TEffect> {
  const [snapshot, actions] = (initialTransition as (m: M, i: InputFrom<M>) => [SnapshotFrom<M>, { type: string; params?: unknown }[]])(
    machine,
    input,
  );
  return { snapshot, effects: effectsOf<TEffect>(actions) };
}

/** Folds one event. Pure: the same snapshot and event always give the same snapshot and effects. */
export function foldEvent<M extends AnyStateMachine, TEffect>(
  machine: M,
  snapshot: SnapshotFrom<M>,
  event: EventFromLogic<M>,
): FoldStep<SnapshotFrom<M>, TEffect> {
  const [next, actions] = transition(machine, snapshot, event) as [SnapshotFrom<M>, { type: string; params?: unknown }[]];
  return { snapshot: next, effects: effectsOf<TEffect>(actions) };
}
