/** The model checks' memoising stepper of a machine, and the machine as graph logic over it. */
import type { AnyStateMachine, EventObject } from 'xstate';
import { effectCollector } from './graph-harness.ts';

/** A memoising stepper: the same snapshot object and event always give the same result object. */
export class MachineStepper<M extends AnyStateMachine, S extends object, E extends EventObject, F> {
  readonly #machine: M;
  readonly #memo = new WeakMap<object, Map<string, { snapshot: S; effects: F[] }>>();
  readonly #fold = effectCollector();
  transitions = 0;

  constructor(machine: M) {
    this.#machine = machine;
  }

  step(snapshot: S, event: E): { snapshot: S; effects: F[] } {
    let byEvent = this.#memo.get(snapshot);
    if (byEvent === undefined) {
      byEvent = new Map();
      this.#memo.set(snapshot, byEvent);
    }
    const key = JSON.stringify(event);
    const hit = byEvent.get(key);
    if (hit !== undefined) return hit;
    this.transitions++;
    const [next, effects] = this.#fold<S, F>(this.#machine, snapshot, event);
    const res = { snapshot: next, effects };
    byEvent.set(key, res);
    return res;
  }

  /** The machine as `@xstate/graph` logic whose transitions go through this stepper. */
  logic(): M {
    const logic = Object.create(this.#machine) as M;
    Object.defineProperty(logic, 'transition', { value: (s: S, e: E) => this.step(s, e).snapshot });
    return logic;
  }
}
