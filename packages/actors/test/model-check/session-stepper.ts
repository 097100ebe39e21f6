/** The model check's memoising stepper of the session machine. */
import { sessionMachine } from '../../src/session-machine.ts';
import type { SessionEffect } from '../../src/session-effects.ts';
import type { SessionEvent } from '../../src/session-events.ts';
import { MachineStepper } from './machine-stepper.ts';
import type { SessionSnapshot } from './session-harness.ts';

export class SessionStepper extends MachineStepper<typeof sessionMachine, SessionSnapshot, SessionEvent, SessionEffect> {
  constructor() {
    super(sessionMachine);
  }
}
