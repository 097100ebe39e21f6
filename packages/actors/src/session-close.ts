import type { SessionContext } from './session-context.ts';
import type { Events, SessionStep } from './session-step.ts';

/**
 * Closing a session (guards and action bodies of the lifecycle region): at once when no writer runs, otherwise after
 * the running writer settles, which a logged timer per close request bounds (then the writer is cancelled).
 */

/** One timer per close request, so a late firing of an earlier close's timer never cancels a later close's writer. */
function closeTimerId(ctx: SessionContext, requestId: string | null = ctx.closeRequestId): string {
  return `${ctx.input.sessionId}-close-${requestId ?? 'none'}`;
}

export function hasRunningWriter(ctx: SessionContext): boolean {
  return ctx.writer !== null;
}

/** Guard: the current close's timer fired while its writer still runs (a stale timer changes nothing). */
export function isCloseTimer(ctx: SessionContext, fired: Events<'timer.fired'>): boolean {
  return ctx.closeRequestId !== null && fired.timerId === closeTimerId(ctx) && ctx.writer !== null;
}

/** Nothing to wait for: the session closes and the request is answered. */
export const closeNow: SessionStep<Events<'close.requested'>> = (ctx, event, emit) => {
  emit({ kind: 'reply', requestId: event.requestId, body: { closed: true } });
  return { ...ctx, closed: true };
};

/** The running writer is awaited, at most the request's `waitMs` (the slot region drops a queued request). */
export const awaitWriterBeforeClose: SessionStep<Events<'close.requested'>> = (ctx, event, emit) => {
  emit({ kind: 'timer.start', timerId: closeTimerId(ctx, event.requestId), ms: event.waitMs });
  return { ...ctx, closeRequestId: event.requestId };
};

/** One close at a time: the runtime refuses a second one while closing, so this only guards the machine. */
export const refuseClose: SessionStep<Events<'close.requested'>> = (ctx, event, emit) => {
  emit({ kind: 'reply', requestId: event.requestId, body: { closed: false, reason: 'already closing' } });
  return ctx;
};

/** The awaited writer settled: the close timer is cancelled and the close request answered. */
export const finishClose: SessionStep = (ctx, _event, emit) => {
  const requestId = ctx.closeRequestId;
  if (requestId === null) throw new Error('finishClose taken without a close in progress');
  emit({ kind: 'timer.cancel', timerId: closeTimerId(ctx) });
  emit({ kind: 'reply', requestId, body: { closed: true } });
  return { ...ctx, closeRequestId: null, closed: true };
};

/** The close waited long enough: the writer is cancelled, and its cancellation settles it like any outcome. */
export const cancelClosingWriter: SessionStep = (ctx, _event, emit) => {
  if (ctx.writer === null) throw new Error('cancelClosingWriter taken without a running writer');
  emit({ kind: 'writer.cancel', writerId: ctx.writer.writerId, reason: 'session closing' });
  return ctx;
};

/** The session is opened again: it takes input and starts writers again. */
export const resume: SessionStep = (ctx) => ({ ...ctx, closed: false, draining: false });

/** A drain of a daemon process that is gone no longer holds writers back. */
export const liftDrain: SessionStep = (ctx) => ({ ...ctx, draining: false });
