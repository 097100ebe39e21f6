import { and, assertEvent, assign, enqueueActions, not, setup, stateIn } from 'xstate';
import { initialSessionContext, type SessionContext } from './session-context.ts';
import type { SessionEffect } from './session-effects.ts';
import type { SessionEvent, SessionInput } from './session-events.ts';
import {
  abandonRebuild,
  answersAtOnce,
  adoptCompactedContext,
  adoptRenderedContext,
  answerRenderFailed,
  awaitWriter,
  beginRebuild,
  cancelWaitTimer,
  compactRebuild,
  hasUsableCheckpoint,
  isAwaitedWriter,
  isCurrentRebuild,
  isWaitTimer,
  rebuildNeedsWriter,
  refuseRebuild,
  renderRebuild,
  renderSucceeded,
  rendersAfterSettle,
  rendersOnTimeout,
} from './session-rebuild.ts';
import {
  announceCrossedRungs,
  canStartRungWriter,
  firstDueRung,
  indexedFields,
  markRungsCrossed,
  reachesRung,
  reachesSeveralRungs,
} from './session-rungs.ts';
import {
  drain,
  dropPendingRequest,
  isRunningWriter,
  pendingRequestCanStart,
  publishIdleStatus,
  queueRequest,
  refuseCheckpoint,
  replyToCheckpoint,
  catchUpDue,
  settleWriter,
  startCatchUpWriter,
  startWriter,
} from './session-slot.ts';
import {
  awaitWriterBeforeClose,
  cancelClosingWriter,
  closeNow,
  finishClose,
  hasRunningWriter,
  isCloseTimer,
  liftDrain,
  refuseClose,
  resume,
} from './session-close.ts';
import type { Events, SessionStep } from './session-step.ts';
import { canQueueRequest, canStartWriter } from './writer-request.ts';

type EventType = SessionEvent['type'];

/**
 * The `effect` action with its data, for `enqueue`. Inside `setup()` XState cannot type an action enqueued by name (the
 * union of named actions is still being inferred), so the one cast sits here, behind a typed parameter.
 */
const effect = (params: SessionEffect) => ({ type: 'effect', params }) as never;

/** Checks that a named action or guard only sees the events it is written for (it is a bug in the chart otherwise). */
function expectEvent<T extends EventType>(event: SessionEvent, types: readonly T[]): asserts event is Events<T> {
  if (!(types as readonly EventType[]).includes(event.type)) throw new Error(`${event.type} reached an action or guard written for ${types.join(', ')}`);
}

/** A named action from a pure step: assigns the context the step returns and enqueues its effects, in order. */
function act<P extends object | undefined = undefined>(step: SessionStep<SessionEvent, P>) {
  return enqueueActions<SessionContext, SessionEvent, P, SessionEvent, never, never, never, never, never>(({ context, event, enqueue }, params) => {
    const effects: SessionEffect[] = [];
    const next = step(context, event, (e) => effects.push(e), params);
    if (next !== context) enqueue.assign(() => next);
    for (const e of effects) enqueue(effect(e));
  });
}

/** A named action from a step that reads the event: only the events it is written for may reach it. */
function actOn<T extends EventType, P extends object | undefined = undefined>(types: readonly T[], step: SessionStep<Events<T>, P>) {
  return act<P>((ctx, event, emit, params) => {
    expectEvent(event, types);
    return step(ctx, event, emit, params);
  });
}

/** A named guard from a predicate over the context and the events it is written for. */
function when<T extends EventType>(types: readonly T[], predicate: (ctx: SessionContext, event: Events<T>) => boolean) {
  return ({ context, event }: { context: SessionContext; event: SessionEvent }): boolean => {
    expectEvent(event, types);
    return predicate(context, event);
  };
}

const notClosing = not(stateIn('#session.lifecycle.closing'));
const startFor = (trigger: 'manual' | 'pending' | 'rebuild') => ({ type: 'startWriter', params: { trigger, rung: null } }) as const;
const startForRung = { type: 'startWriter', params: ({ context }: { context: SessionContext }) => ({ trigger: 'threshold' as const, rung: firstDueRung(context) }) } as const;
const queueFor = (trigger: 'manual' | 'threshold') => ({ type: 'queueRequest', params: { trigger } }) as const;
const compactWith = (outcome: 'compacted' | 'checkpoint-off' | 'memory-write-off') => ({ type: 'compactRebuild', params: { outcome } }) as const;
const beginAs = (mode: 'needed' | 'usable') => ({ type: 'beginRebuild', params: { mode } }) as const;
const refuse = { actions: 'refuseRebuild' } as const;
const abandon = { guard: 'isCurrentRebuild', target: 'idle', actions: 'abandonRebuild' } as const;

/**
 * The session actor: three parallel regions whose states change only on events.
 *
 * ```
 * slot: the checkpoint writer slot (at most one running writer, at most one pending request)
 *   idle ─ messages.appended [reachesSeveralRungs ∧ canStartRungWriter] ─► runningPending  (one start, one queued)
 *        ─ messages.appended [canStartRungWriter] ──────────────────────► running
 *        ─ messages.appended [reachesRung] ─────────────────────────────► idle            (rungs fire, no writer)
 *        ─ messages.appended [catchUpDue] ──────────────────────────────► running         (a writer catches up to a
 *                                                                                         fitted rebuild's boundary)
 *        ─ checkpoint.requested [canStartWriter] ───────────────────────► running         (else refused)
 *        ─ rebuild.requested [rebuild in idle ∧ rebuildNeedsWriter] ────► running
 *   running ─ checkpoint.requested [canQueueRequest] ───────────────────► runningPending  (else refused)
 *           ─ writer.settled [isRunningWriter] ─────────────────────────► idle
 *   runningPending ─ checkpoint.requested ──────────────────────────────► runningPending  (replaces the request)
 *       ─ writer.settled [isRunningWriter ∧ ¬closing ∧ pendingRequestCanStart] ─► running
 *       ─ writer.settled [isRunningWriter] ─────────────────────────────► idle
 *       ─ drain.requested | close.requested [¬closing] ─────────────────► running         (request dropped)
 *
 * rebuild: one at a time (rebuild.requested is refused outside idle)
 *   idle ─ rebuild.requested [checkpointsOff | memoryWritesOff] ────────► compacting
 *        ─ rebuild.requested [hasUsableCheckpoint ∧ hasRunningWriter] ──► waiting         (for the in-flight writer)
 *        ─ rebuild.requested [hasUsableCheckpoint] ─────────────────────► rendering
 *        ─ rebuild.requested [answersAtOnce] ───────────────────────────► compacting      (the agent's compaction)
 *        ─ rebuild.requested [hasRunningWriter | rebuildNeedsWriter] ───► waiting         (for a checkpoint)
 *        ─ rebuild.requested ───────────────────────────────────────────► compacting
 *   waiting ─ writer.settled [isAwaitedWriter ∧ rendersAfterSettle] ────► rendering
 *           ─ writer.settled [isAwaitedWriter] ─────────────────────────► compacting
 *           ─ timer.fired [isWaitTimer ∧ rendersOnTimeout] ─────────────► rendering
 *           ─ timer.fired [isWaitTimer] ────────────────────────────────► compacting
 *   rendering ─ rebuild.rendered [isCurrentRebuild] ────────────────────► idle            (rebuilt | insert-failed)
 *   compacting ─ rebuild.compacted [isCurrentRebuild] ──────────────────► idle
 *   waiting | rendering | compacting ─ rebuild.abandoned [isCurrentRebuild] ─► idle        (no answer)
 *
 * lifecycle
 *   active | closed ─ close.requested [hasRunningWriter] ───────────────► closing         (a logged timer bounds it)
 *                   ─ close.requested ──────────────────────────────────► closed
 *   closing ─ writer.settled [isRunningWriter] ─────────────────────────► closed          (the close is answered)
 *           ─ timer.fired [isCloseTimer] / the writer is cancelled; close.requested / refused
 *   closed ─ session.resumed ───────────────────────────────────────────► active
 *   (any state) ─ drain.lifted / writers may start again (the drain belonged to a daemon process that is gone)
 * ```
 *
 * Events a state has no transition for (duplicates, stale ids, late results) change nothing. For one event every
 * region's transition is chosen on the context before the event, so guards that depend on what the event brings
 * (`canStartRungWriter` on the messages indexed, `pendingRequestCanStart` on the writer settled) look at it through
 * the same pure steps the actions run. The actions then run in region order — slot, rebuild, lifecycle — each on the
 * context the previous one left: a settlement publishes `writer.settled` (and starts the pending writer) before the
 * waiting rebuild goes on, and both before the close is answered; a rebuild's writer starts before its wait does.
 * Data stays in the context: the message index, the usage, the ladder, the watermark, the writer and rebuild records,
 * counters. `closing` is the state of a close waiting for its writer (`closeRequestId`); the runtime refuses input to a
 * closed session, which is the only way to have a writer to wait for there. Effects leave the machine as `effect`
 * actions carrying `SessionEffect` data, which the host executes once the event is durable (and replay compares).
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
    replaceTasks: assign(({ event }) => {
      assertEvent(event, 'tasks.replaced');
      return { tasks: event.tasks };
    }),
    // slot
    // Every append runs it: a plain assign of the fields it changes (it emits no effect), which spares the effect
    // machinery of `act` and a second copy of the whole context.
    indexMessages: assign(({ context, event }) => {
      expectEvent(event, ['messages.appended']);
      return indexedFields(context, event);
    }),
    announceCrossedRungs: act(announceCrossedRungs),
    markRungsCrossed: act(markRungsCrossed),
    startWriter: act(startWriter),
    startCatchUpWriter: act(startCatchUpWriter),
    queueRequest: act(queueRequest),
    replyToCheckpoint: actOn(['checkpoint.requested'], replyToCheckpoint),
    refuseCheckpoint: actOn(['checkpoint.requested'], refuseCheckpoint),
    settleWriter: actOn(['writer.settled'], settleWriter),
    publishIdleStatus: act(publishIdleStatus),
    dropPendingRequest: act(dropPendingRequest),
    drain: act(drain),
    // rebuild
    beginRebuild: actOn(['rebuild.requested'], beginRebuild),
    refuseRebuild: actOn(['rebuild.requested'], refuseRebuild),
    awaitWriter: act(awaitWriter),
    cancelWaitTimer: act(cancelWaitTimer),
    renderRebuild: act(renderRebuild),
    compactRebuild: act(compactRebuild),
    adoptRenderedContext: actOn(['rebuild.rendered'], adoptRenderedContext),
    answerRenderFailed: actOn(['rebuild.rendered'], answerRenderFailed),
    adoptCompactedContext: actOn(['rebuild.compacted'], adoptCompactedContext),
    abandonRebuild: actOn(['rebuild.abandoned'], abandonRebuild),
    // lifecycle
    closeNow: actOn(['close.requested'], closeNow),
    awaitWriterBeforeClose: actOn(['close.requested'], awaitWriterBeforeClose),
    refuseClose: actOn(['close.requested'], refuseClose),
    finishClose: act(finishClose),
    cancelClosingWriter: act(cancelClosingWriter),
    resume: act(resume),
    liftDrain: act(liftDrain),
  },
  guards: {
    // slot
    reachesRung: when(['messages.appended'], reachesRung),
    reachesSeveralRungs: when(['messages.appended'], reachesSeveralRungs),
    canStartRungWriter: when(['messages.appended'], canStartRungWriter),
    canStartWriter: ({ context }) => canStartWriter(context),
    canQueueRequest: ({ context }) => canQueueRequest(context),
    isRunningWriter: when(['writer.settled'], isRunningWriter),
    pendingRequestCanStart: when(['writer.settled'], pendingRequestCanStart),
    // rebuild
    checkpointsOff: ({ context }) => !context.input.checkpointEnabled,
    memoryWritesOff: ({ context }) => context.input.memoryWriteDisabled,
    hasUsableCheckpoint: when(['rebuild.requested'], hasUsableCheckpoint),
    hasRunningWriter: ({ context }) => hasRunningWriter(context),
    rebuildNeedsWriter: when(['rebuild.requested'], rebuildNeedsWriter),
    answersAtOnce: when(['rebuild.requested'], answersAtOnce),
    catchUpDue: ({ context }) => catchUpDue(context),
    isAwaitedWriter: when(['writer.settled'], isAwaitedWriter),
    rendersAfterSettle: when(['writer.settled'], rendersAfterSettle),
    isWaitTimer: when(['timer.fired'], isWaitTimer),
    rendersOnTimeout: ({ context }) => rendersOnTimeout(context),
    isCurrentRebuild: when(['rebuild.rendered', 'rebuild.compacted', 'rebuild.abandoned'], isCurrentRebuild),
    renderSucceeded: when(['rebuild.rendered'], (_ctx, event) => renderSucceeded(event)),
    // lifecycle
    isCloseTimer: when(['timer.fired'], isCloseTimer),
  },
}).createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) => initialSessionContext(input),
  // No region reacts to the task tree: it is data.
  on: { 'tasks.replaced': { actions: 'replaceTasks' } },
  states: {
    slot: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            'messages.appended': [
              {
                guard: and(['reachesSeveralRungs', 'canStartRungWriter']),
                target: 'runningPending',
                actions: ['indexMessages', 'announceCrossedRungs', startForRung, queueFor('threshold'), 'markRungsCrossed'],
              },
              { guard: 'canStartRungWriter', target: 'running', actions: ['indexMessages', 'announceCrossedRungs', startForRung, 'markRungsCrossed'] },
              // The rungs fire (and are consumed) although no writer can start: nothing new to cover.
              { guard: 'reachesRung', actions: ['indexMessages', 'announceCrossedRungs', 'markRungsCrossed'] },
              // A fitted rebuild asked a writer to catch up to its boundary: it starts now that the context went on.
              { guard: 'catchUpDue', target: 'running', actions: ['indexMessages', 'startCatchUpWriter'] },
              { actions: 'indexMessages' },
            ],
            'checkpoint.requested': [
              { guard: 'canStartWriter', target: 'running', actions: [startFor('manual'), { type: 'replyToCheckpoint', params: { result: 'started' } }] },
              { actions: 'refuseCheckpoint' },
            ],
            'rebuild.requested': { guard: and([stateIn('#session.rebuild.idle'), 'rebuildNeedsWriter']), target: 'running', actions: startFor('rebuild') },
            'drain.requested': { actions: 'drain' },
          },
        },
        running: {
          on: {
            'messages.appended': { actions: 'indexMessages' },
            'checkpoint.requested': [
              {
                guard: 'canQueueRequest',
                target: 'runningPending',
                actions: [queueFor('manual'), { type: 'replyToCheckpoint', params: { result: 'queued', reason: 'writer running' } }],
              },
              { actions: 'refuseCheckpoint' },
            ],
            'writer.settled': { guard: 'isRunningWriter', target: 'idle', actions: ['settleWriter', 'publishIdleStatus'] },
            'drain.requested': { actions: 'drain' },
          },
        },
        runningPending: {
          on: {
            'messages.appended': { actions: 'indexMessages' },
            // A drain leaves this state (and the switches were on when the request queued), so a request replaces it.
            'checkpoint.requested': {
              target: 'runningPending',
              actions: [queueFor('manual'), { type: 'replyToCheckpoint', params: { result: 'queued', reason: 'replaced pending request' } }],
            },
            'writer.settled': [
              // The pending request is evaluated against the conversation as it is now; a closing session drops it.
              { guard: and(['isRunningWriter', notClosing, 'pendingRequestCanStart']), target: 'running', actions: ['settleWriter', startFor('pending')] },
              { guard: 'isRunningWriter', target: 'idle', actions: ['settleWriter', 'publishIdleStatus'] },
            ],
            'drain.requested': { target: 'running', actions: 'drain' },
            'close.requested': { guard: notClosing, target: 'running', actions: 'dropPendingRequest' },
          },
        },
      },
    },
    rebuild: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            'rebuild.requested': [
              { guard: 'checkpointsOff', target: 'compacting', actions: [beginAs('needed'), compactWith('checkpoint-off')] },
              { guard: 'memoryWritesOff', target: 'compacting', actions: [beginAs('needed'), compactWith('memory-write-off')] },
              {
                guard: and(['hasUsableCheckpoint', 'hasRunningWriter']),
                target: 'waiting',
                actions: [beginAs('usable'), { type: 'awaitWriter', params: ({ event }) => ({ ms: Math.min(event.inFlightWaitMs, event.waitMs) }) }],
              },
              { guard: 'hasUsableCheckpoint', target: 'rendering', actions: [beginAs('usable'), 'renderRebuild'] },
              { guard: 'answersAtOnce', target: 'compacting', actions: [beginAs('needed'), compactWith('compacted')] },
              { guard: 'hasRunningWriter', target: 'waiting', actions: [beginAs('needed'), { type: 'awaitWriter', params: ({ event }) => ({ ms: event.waitMs }) }] },
              // The slot region started the writer in this step.
              { guard: 'rebuildNeedsWriter', target: 'waiting', actions: [beginAs('needed'), { type: 'awaitWriter', params: ({ event }) => ({ ms: event.waitMs }) }] },
              { target: 'compacting', actions: [beginAs('needed'), compactWith('compacted')] },
            ],
          },
        },
        waiting: {
          on: {
            'rebuild.requested': refuse,
            'writer.settled': [
              { guard: and(['isAwaitedWriter', 'rendersAfterSettle']), target: 'rendering', actions: ['cancelWaitTimer', 'renderRebuild'] },
              { guard: 'isAwaitedWriter', target: 'compacting', actions: ['cancelWaitTimer', compactWith('compacted')] },
            ],
            // The writer keeps running; the rebuild goes on with what is on disk.
            'timer.fired': [
              { guard: and(['isWaitTimer', 'rendersOnTimeout']), target: 'rendering', actions: 'renderRebuild' },
              { guard: 'isWaitTimer', target: 'compacting', actions: compactWith('compacted') },
            ],
            'rebuild.abandoned': abandon,
          },
        },
        rendering: {
          on: {
            'rebuild.requested': refuse,
            'rebuild.rendered': [
              { guard: and(['isCurrentRebuild', 'renderSucceeded']), target: 'idle', actions: 'adoptRenderedContext' },
              { guard: 'isCurrentRebuild', target: 'idle', actions: 'answerRenderFailed' },
            ],
            'rebuild.abandoned': abandon,
          },
        },
        compacting: {
          on: {
            'rebuild.requested': refuse,
            'rebuild.compacted': { guard: 'isCurrentRebuild', target: 'idle', actions: 'adoptCompactedContext' },
            'rebuild.abandoned': abandon,
          },
        },
      },
    },
    lifecycle: {
      initial: 'active',
      on: { 'drain.lifted': { actions: 'liftDrain' } },
      states: {
        active: {
          on: {
            'close.requested': [
              { guard: 'hasRunningWriter', target: 'closing', actions: 'awaitWriterBeforeClose' },
              { target: 'closed', actions: 'closeNow' },
            ],
            'session.resumed': { actions: 'resume' },
          },
        },
        closing: {
          on: {
            'close.requested': { actions: 'refuseClose' },
            'writer.settled': { guard: 'isRunningWriter', target: 'closed', actions: 'finishClose' },
            'timer.fired': { guard: 'isCloseTimer', actions: 'cancelClosingWriter' },
            'session.resumed': { actions: 'resume' },
          },
        },
        closed: {
          on: {
            'close.requested': [
              // Only if input reached a closed session and started a writer (the runtime refuses such input).
              { guard: 'hasRunningWriter', target: 'closing', actions: 'awaitWriterBeforeClose' },
              { actions: 'closeNow' },
            ],
            'session.resumed': { target: 'active', actions: 'resume' },
          },
        },
      },
    },
  },
});

export type SessionMachine = typeof sessionMachine;
