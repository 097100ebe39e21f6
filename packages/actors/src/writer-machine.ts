import type { WriterOutcome } from '@baton/protocol';
import { assertEvent, assign, enqueueActions, setup } from 'xstate';
import type { Failure } from './session-events.ts';
import { initialWriterContext, type WriterContext, type WriterPhase } from './writer-context.ts';
import type { Nudge, WriterEffect } from './writer-effects.ts';
import type { WriterEvent, WriterInput } from './writer-events.ts';

type Events<T extends WriterEvent['type']> = Extract<WriterEvent, { type: T }>;

/** How a run settles: the `settle` action's parameters. */
interface Settlement {
  readonly outcome: WriterOutcome;
  readonly failure: Failure | null;
  readonly reason: string | null;
}

/**
 * The `effect` action with its data, for `enqueue`. Inside `setup()` XState cannot type an action enqueued by name (the
 * union of named actions is still being inferred), so the one cast sits here, behind a typed parameter.
 */
const effect = (params: WriterEffect) => ({ type: 'effect', params }) as never;

/** Extraction comes before structural errors: errors are re-checked after the extraction turn. */
function reentryNudge(verdict: Events<'validation.completed'>): Extract<Nudge, { kind: 'validation' | 'extraction' }> {
  return verdict.extract.length > 0 ? { kind: 'extraction', details: verdict.extract } : { kind: 'validation', details: verdict.errors };
}

const cancelled = ({ event }: { event: Events<'writer.cancel'> }): Settlement => ({
  outcome: 'cancelled',
  failure: { kind: 'cancelled', retryable: false, message: event.reason },
  reason: event.reason,
});

/** Any state but `settled`: a cancellation settles the run at once. */
const cancel = { target: 'settled', actions: { type: 'settle', params: cancelled } } as const;

/**
 * One checkpoint-writer run. Each state is left by the result of the effect its entering transition
 * emitted (the host runs the effect and logs the result as the next event):
 *
 * ```
 * preparing  ── writer.prepared ─────────────────────────────────────► calling
 *            ── writer.prepare_failed ───────────────────────────────► settled
 * calling    ── model.replied [hasToolCalls] ────────────────────────► tools
 *            ── model.replied [hasText] ─────────────────────────────► validating
 *            ── model.replied [withinContinuations] ─────────────────► calling     (reminder after an empty stop)
 *            ── model.replied ───────────────────────────────────────► settled     (no completion)
 *            ── model.failed ────────────────────────────────────────► settled
 * tools      ── tools.completed ─────────────────────────────────────► calling
 * validating ── validation.completed [isClean] ──────────────────────► committing
 *            ── validation.completed [canReenter] ───────────────────► calling     (extraction, then validation; not
 *                                                                                   after a reflection left unanswered)
 *            ── validation.completed [hasErrors] ────────────────────► settled     (draft quarantined)
 *            ── validation.completed ────────────────────────────────► committing  (over budget: warnings)
 * committing ── commit.completed | commit.failed ────────────────────► settled
 * any but settled ── writer.cancel ──────────────────────────────────► settled
 * ```
 *
 * `settled` is final. An event that does not fit the state (a duplicate, a late result) has no transition and changes
 * nothing. The limits come from the input: `canReenter` (`maxReentries`, 3 in production) and `withinContinuations`
 * (`maxContinuations`, 2). Effects leave the machine as `effect` actions carrying `WriterEffect` data, which the host
 * executes (and replay compares); `phase` in the context names the state for the runtime's `status`.
 */
export const writerMachine = setup({
  types: { context: {} as WriterContext, events: {} as WriterEvent, input: {} as WriterInput },
  actions: {
    // Executed by the host, never by the machine: effects are data.
    effect: (_args, _params: WriterEffect) => {},
    enterPhase: assign((_args, params: { phase: WriterPhase }) => ({ phase: params.phase })),
    callModel: enqueueActions(({ context, enqueue }, params: { nudge: Nudge | null }) => {
      enqueue(effect({ kind: 'model.call', call: context.calls + 1, nudge: params.nudge }));
      enqueue.assign({ calls: context.calls + 1 });
    }),
    recordUsage: assign(({ context: { perf }, event }) => {
      assertEvent(event, 'model.replied');
      const { prompt, cached } = event.usage;
      return { perf: { calls: perf.calls + 1, promptTokens: perf.promptTokens + prompt, cachedTokens: perf.cachedTokens + cached } };
    }),
    runTools: enqueueActions(({ event, enqueue }) => {
      assertEvent(event, 'model.replied');
      enqueue(effect({ kind: 'tools.run', calls: event.toolCalls }));
    }),
    validate: enqueueActions(({ enqueue }) => {
      enqueue(effect({ kind: 'validate' }));
    }),
    remindWriter: enqueueActions(({ context, enqueue }) => {
      const continuations = context.continuations + 1;
      enqueue.assign({ continuations });
      enqueue(effect({ kind: 'reentered', iteration: continuations, reason: 'continuation' }));
    }),
    reenterWriter: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'validation.completed');
      const reentries = context.reentries + 1;
      enqueue.assign({ reentries, continuations: 0 });
      enqueue(effect({ kind: 'reentered', iteration: reentries, reason: reentryNudge(event).kind }));
    }),
    commitDraft: enqueueActions(({ event, enqueue }) => {
      assertEvent(event, 'validation.completed');
      // Sections still over budget after the last re-entry are committed, each with a warning.
      enqueue(effect({ kind: 'commit', warnings: [...event.warnings, ...event.extract] }));
    }),
    quarantineDraft: enqueueActions(({ event, enqueue }) => {
      assertEvent(event, 'validation.completed');
      enqueue(effect({ kind: 'quarantine', errors: event.errors }));
    }),
    settle: enqueueActions(({ context, enqueue }, { outcome, failure, reason }: Settlement) => {
      enqueue(effect({ kind: 'settle', outcome, failure, reason, perf: context.perf }));
      enqueue.assign({ outcome, failure });
    }),
  },
  guards: {
    hasToolCalls: ({ event }) => {
      assertEvent(event, 'model.replied');
      return event.toolCalls.length > 0;
    },
    hasText: ({ event }) => {
      assertEvent(event, 'model.replied');
      return (event.content ?? '').trim() !== '';
    },
    withinContinuations: ({ context }) => context.continuations < context.input.maxContinuations,
    isClean: ({ event }) => {
      assertEvent(event, 'validation.completed');
      return event.errors.length === 0 && event.extract.length === 0;
    },
    // Another re-entry only when it could change something: not after a reflection the writer did nothing with.
    canReenter: ({ context, event }) => context.reentries < context.input.maxReentries && !(event.type === 'validation.completed' && event.unchanged === true),
    hasErrors: ({ event }) => {
      assertEvent(event, 'validation.completed');
      return event.errors.length > 0;
    },
  },
}).createMachine({
  id: 'writer',
  initial: 'preparing',
  context: ({ input }) => initialWriterContext(input),
  entry: { type: 'effect', params: { kind: 'prepare' } },
  states: {
    preparing: {
      entry: { type: 'enterPhase', params: { phase: 'preparing' } },
      on: {
        'writer.prepared': { target: 'calling', actions: { type: 'callModel', params: { nudge: null } } },
        'writer.prepare_failed': {
          target: 'settled',
          actions: { type: 'settle', params: ({ event }) => ({ outcome: event.outcome, failure: event.failure ?? null, reason: event.reason }) },
        },
        'writer.cancel': cancel,
      },
    },
    calling: {
      entry: { type: 'enterPhase', params: { phase: 'calling' } },
      on: {
        'model.replied': [
          { guard: 'hasToolCalls', target: 'tools', actions: ['recordUsage', 'runTools'] },
          { guard: 'hasText', target: 'validating', actions: ['recordUsage', 'validate'] },
          // An empty or reasoning-only stop: remind the writer, at most `maxContinuations` times since the last entry.
          {
            guard: 'withinContinuations',
            target: 'calling',
            actions: ['recordUsage', 'remindWriter', { type: 'callModel', params: { nudge: { kind: 'continuation' } } }],
          },
          {
            target: 'settled',
            actions: [
              'recordUsage',
              {
                type: 'settle',
                params: ({ context }) => {
                  const message = `no completion after ${context.continuations} reminders`;
                  return { outcome: 'failure', failure: { kind: 'other', retryable: false, message }, reason: message };
                },
              },
            ],
          },
        ],
        'model.failed': {
          target: 'settled',
          actions: { type: 'settle', params: ({ event }) => ({ outcome: 'failure', failure: event.failure, reason: event.failure.message ?? null }) },
        },
        'writer.cancel': cancel,
      },
    },
    tools: {
      entry: { type: 'enterPhase', params: { phase: 'tools' } },
      on: {
        'tools.completed': { target: 'calling', actions: { type: 'callModel', params: { nudge: null } } },
        'writer.cancel': cancel,
      },
    },
    validating: {
      entry: { type: 'enterPhase', params: { phase: 'validating' } },
      on: {
        'validation.completed': [
          { guard: 'isClean', target: 'committing', actions: 'commitDraft' },
          {
            guard: 'canReenter',
            target: 'calling',
            actions: ['reenterWriter', { type: 'callModel', params: ({ event }) => ({ nudge: reentryNudge(event) }) }],
          },
          // Structural errors left after the last re-entry: keep the draft as checkpoint.invalid.md and fail.
          {
            guard: 'hasErrors',
            target: 'settled',
            actions: [
              'quarantineDraft',
              {
                type: 'settle',
                params: ({ event }) => ({
                  outcome: 'failure',
                  failure: { kind: 'validation', retryable: false, message: event.errors.join('; '), ...(event.rules !== undefined ? { rules: event.rules } : {}) },
                  reason: event.unchanged === true ? 'the writer left its draft as it was after the reflection' : 'structural errors remain after the last re-entry',
                }),
              },
            ],
          },
          { target: 'committing', actions: 'commitDraft' },
        ],
        'writer.cancel': cancel,
      },
    },
    committing: {
      entry: { type: 'enterPhase', params: { phase: 'committing' } },
      on: {
        'commit.completed': { target: 'settled', actions: { type: 'settle', params: { outcome: 'success', failure: null, reason: null } } },
        'commit.failed': {
          target: 'settled',
          actions: {
            type: 'settle',
            params: ({ event }) => ({ outcome: 'failure', failure: { kind: 'other', retryable: false, message: event.message }, reason: event.message }),
          },
        },
        'writer.cancel': cancel,
      },
    },
    settled: {
      type: 'final',
      entry: { type: 'enterPhase', params: { phase: 'settled' } },
    },
  },
});

export type WriterMachine = typeof writerMachine;
