import { enqueueActions, setup } from 'xstate';
import type { SessionEffect } from './session-effects.ts';
import type { SessionEvent, SessionInput } from './session-events.ts';
import { initialSessionContext, type SessionContext } from './session-context.ts';
import { planSessionEvent } from './session-plan.ts';

/**
 * The session actor. Two regions mirror the context: `slot` (idle / running / runningPending) and `lifecycle`
 * (active / closing / closed). Every event is folded by the pure `planSessionEvent`; effects leave the machine as
 * `effect` actions carrying data, which the host executes (and replay ignores).
 */
export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actions: {
    // Executed by the host, never by the machine: effects are data.
    effect: (_args, _params: SessionEffect) => {},
  },
  guards: {
    writerIdle: ({ context }) => context.writer === null,
    writerRunningOnly: ({ context }) => context.writer !== null && context.pending === null,
    writerRunningPending: ({ context }) => context.writer !== null && context.pending !== null,
    closing: ({ context }) => context.closeRequestId !== null,
    closed: ({ context }) => context.closed,
    open: ({ context }) => !context.closed && context.closeRequestId === null,
  },
}).createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) => initialSessionContext(input),
  on: {
    '*': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const plan = planSessionEvent(context, event);
        enqueue.assign(() => plan.context);
        for (const effect of plan.effects) enqueue({ type: 'effect', params: effect });
      }),
    },
  },
  states: {
    slot: {
      initial: 'idle',
      states: {
        idle: {
          always: [
            { guard: 'writerRunningOnly', target: 'running' },
            { guard: 'writerRunningPending', target: 'runningPending' },
          ],
        },
        running: {
          always: [
            { guard: 'writerIdle', target: 'idle' },
            { guard: 'writerRunningPending', target: 'runningPending' },
          ],
        },
        runningPending: {
          always: [
            { guard: 'writerIdle', target: 'idle' },
            { guard: 'writerRunningOnly', target: 'running' },
          ],
        },
      },
    },
    lifecycle: {
      initial: 'active',
      states: {
        active: { always: [{ guard: 'closed', target: 'closed' }, { guard: 'closing', target: 'closing' }] },
        closing: { always: [{ guard: 'closed', target: 'closed' }, { guard: 'open', target: 'active' }] },
        closed: { always: [{ guard: 'open', target: 'active' }] },
      },
    },
  },
});

export type SessionMachine = typeof sessionMachine;
