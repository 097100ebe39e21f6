import { createEmptyActor, initialTransition, type AnyStateMachine, type SnapshotFrom, type EventFromLogic, type InputFrom } from 'xstate';

/** The result of folding one event through a machine's pure XState transition. */
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

/** The scope a machine's `transition` takes. */
type MachineScope = Parameters<AnyStateMachine['transition']>[2];

interface InertScope {
  readonly scope: MachineScope;
  /** The actions of the transition under way (the scope's executor collects instead of running them). */
  readonly actions: { type: string; params?: unknown }[];
}

const scopes = new WeakMap<AnyStateMachine, InertScope>();

/**
 * The scope `foldEvent` transitions a machine in: an actor that never starts, and an action executor that only
 * collects. XState's `transition()` builds such a scope for each call, and building it constructs an actor of the
 * machine, which computes the machine's whole initial state (about as much work as the transition itself). For a
 * machine that spawns and invokes nothing (ours), nothing of the scope changes from one transition to the next, so
 * one per machine serves every fold; its actor is an empty one, as the model checks' collector uses.
 */
function inertScope(machine: AnyStateMachine): InertScope {
  let entry = scopes.get(machine);
  if (entry === undefined) {
    const self = createEmptyActor();
    const actions: InertScope['actions'] = [];
    const scope: MachineScope = {
      // Never started nor sent to: our machines only read their context and event, and emit effects as data.
      self: self as unknown as MachineScope['self'],
      id: '',
      sessionId: '',
      logger: () => {},
      defer: () => {},
      emit: () => {},
      system: self.system,
      stopChild: () => {},
      actionExecutor: (action) => {
        actions.push(action);
      },
    };
    entry = { scope, actions };
    scopes.set(machine, entry);
  }
  return entry;
}

/** Folds one event. Pure: the same snapshot and event always give the same snapshot and effects. */
export function foldEvent<M extends AnyStateMachine, TEffect>(
  machine: M,
  snapshot: SnapshotFrom<M>,
  event: EventFromLogic<M>,
): FoldStep<SnapshotFrom<M>, TEffect> {
  const { scope, actions } = inertScope(machine);
  // Folding is synchronous and never nested: the list holds this transition's actions alone.
  actions.length = 0;
  try {
    const next = machine.transition(snapshot, event, scope) as SnapshotFrom<M>;
    return { snapshot: next, effects: effectsOf<TEffect>(actions) };
  } finally {
    actions.length = 0;
  }
}
