import { enqueueActions, setup } from 'xstate';
import type { WriterEffect } from './writer-effects.ts';
import type { WriterEvent, WriterInput } from './writer-events.ts';
import { initialWriterContext, planWriterEvent, type WriterContext } from './writer-plan.ts';

/**
 * One checkpoint-writer run: preparing → calling ⇄ tools → validating → (calling again on re-entry | committing)
 * → settled. Limits (re-entries, continuations) are enforced by the pure `planWriterEvent`; states mirror its phase.
 */
export const writerMachine = setup({
  types: { context: {} as WriterContext, events: {} as WriterEvent, input: {} as WriterInput },
  actions: {
    effect: (_args, _params: WriterEffect) => {},
  },
  guards: {
    isPhase: ({ context }, params: { phase: WriterContext['phase'] }) => context.phase === params.phase,
  },
}).createMachine({
  id: 'writer',
  initial: 'preparing',
  context: ({ input }) => initialWriterContext(input),
  entry: { type: 'effect', params: { kind: 'prepare' } },
  on: {
    '*': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        const plan = planWriterEvent(context, event);
        enqueue.assign(() => plan.context);
        for (const effect of plan.effects) enqueue({ type: 'effect', params: effect });
      }),
    },
  },
  always: [
    { guard: { type: 'isPhase', params: { phase: 'settled' } }, target: '.settled' },
  ],
  states: {
    preparing: { always: { guard: { type: 'isPhase', params: { phase: 'calling' } }, target: 'calling' } },
    calling: {
      always: [
        { guard: { type: 'isPhase', params: { phase: 'tools' } }, target: 'tools' },
        { guard: { type: 'isPhase', params: { phase: 'validating' } }, target: 'validating' },
      ],
    },
    tools: { always: { guard: { type: 'isPhase', params: { phase: 'calling' } }, target: 'calling' } },
    validating: {
      always: [
        { guard: { type: 'isPhase', params: { phase: 'committing' } }, target: 'committing' },
        { guard: { type: 'isPhase', params: { phase: 'calling' } }, target: 'calling' },
      ],
    },
    committing: {},
    settled: { type: 'final' },
  },
});

export type WriterMachine = typeof writerMachine;
