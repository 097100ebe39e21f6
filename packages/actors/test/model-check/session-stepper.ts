/** The model check's memoising stepper of the session machine, and the machine as graph logic over it. */
import { sessionMachine } from '../../src/session-machine.ts';
import type { SessionEffect } from '../../src/session-effects.ts';
import type { SessionEvent } from '../../src/session-events.ts';
import { effectCollector } from './graph-harness.ts';
import type { SessionSnapshot } from './session-harness.ts';

/** A memoising stepper: the same snapshot object and event always give the same result object. */
export class SessionStepper {
  private readonly memo = new WeakMap<object, Map<string, { snapshot: SessionSnapshot; effects: SessionEffect[] }>>();
  private readonly fold = effectCollector();
  transitions = 0;

  step(snapshot: SessionSnapshot, event: SessionEvent): { snapshot: SessionSnapshot; effects: SessionEffect[] } {
    let byEvent = this.memo.get(snapshot);
    if (byEvent === undefined) {
      byEvent = new Map();
      this.memo.set(snapshot, byEvent);
    }
    const key = JSON.stringify(event);
    const hit = byEvent.get(key);
    if (hit !== undefined) return hit;
    this.transitions++;
    const [next, effects] = this.fold<SessionSnapshot, SessionEffect>(sessionMachine, snapshot, event);
    const res = { snapshot: next, effects };
    byEvent.set(key, res);
    return res;
  }

  /** The machine as `@xstate/graph` logic whose transitions go through this stepper. */
  logic(): typeof sessionMachine {
    const logic = Object.create(sessionMachine) as typeof sessionMachine;
    Object.defineProperty(logic, 'transition', { value: (s: SessionSnapshot, e: SessionEvent) => this.step(s, e).snapshot });
    return logic;
  }
}
