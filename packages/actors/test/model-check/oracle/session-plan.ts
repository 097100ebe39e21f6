/**
 * TEST ORACLE, not production code: a frozen copy of `src/session-plan.ts` at commit acaaad3, part of the pure reducer
 * the session and writer machines delegated every event to before their states became real transitions.
 * `reducer-equivalence.test.ts` folds the same events through the machines and through this copy and requires
 * equal contexts and equal effects in the same order. Never edit it to make a test pass.
 */
/* eslint-disable @typescript-eslint/switch-exhaustiveness-check -- frozen as written, before the rule existed */
import type { Failure, SessionEvent } from '../../../src/session-events.ts';
import type { SessionEffect } from '../../../src/session-effects.ts';
import type { LastOutcome, RunningWriter } from '../../../src/session-context.ts';
import type { SessionContext } from './session-context.ts';
import { requestWriter } from './writer-request.ts';
import { onRebuildEvent, rebuildAfterSettle } from './session-rebuild.ts';

/** The result of folding one event: the next context and the effects to run once the event is durable. */
export interface Plan {
  readonly context: SessionContext;
  readonly effects: readonly SessionEffect[];
}

function append(ctx: SessionContext, event: Extract<SessionEvent, { type: 'messages.appended' }>, effects: SessionEffect[]): SessionContext {
  const main = event.messages.filter((m) => m.main);
  const index = [
    ...ctx.index,
    ...main.map(({ id, role, tokens, textual, finished, toolCallIds }) => ({ id, role, tokens, textual, finished, toolCallIds })),
  ];
  let tokens = ctx.tokens;
  let usageRecovered = ctx.usageRecovered;
  for (const m of main) {
    if (m.role === 'assistant' && m.finished && m.usageTotal !== null) {
      tokens = m.usageTotal;
      usageRecovered = false;
    }
  }
  let next: SessionContext = { ...ctx, index, tokens, usageRecovered };
  // Rungs are only consumed when a writer could run now: disabled switches and a busy writer leave them armed.
  // A usage already recovered by a rebuild fires nothing.
  const canFire = next.input.checkpointEnabled && !next.input.memoryWriteDisabled && !next.draining && !next.usageRecovered && next.writer === null;
  if (!canFire) return next;
  const fresh = next.input.thresholds.filter((t) => t <= tokens && !next.crossed.includes(t));
  const gate = next.recoveryGate;
  if (fresh.length === 0) {
    if (gate === null || tokens < gate) return next;
    // The recovery gate re-fires the final rung exactly once.
    const final = next.input.thresholds.at(-1) ?? gate;
    next = { ...next, recoveryGate: null };
    effects.push({ kind: 'publish', event: { type: 'threshold.crossed', threshold: final, tokens } });
    [next] = requestWriter(next, 'threshold', effects, final);
    return next;
  }
  next = { ...next, crossed: [...next.crossed, ...fresh] };
  for (const t of fresh) effects.push({ kind: 'publish', event: { type: 'threshold.crossed', threshold: t, tokens } });
  // Several rungs at once: the first starts a writer, the rest collapse into one pending request.
  [next] = requestWriter(next, 'threshold', effects, fresh[0] ?? null);
  if (fresh.length > 1) [next] = requestWriter(next, 'threshold', effects);
  return next;
}

/** Gate after a transient failure of the final rung's writer: one rung-step later, capped at `maxAllowed`. */
function recoveryGateAfter(ctx: SessionContext, writer: RunningWriter, failure: Failure | undefined): number | null {
  const rungs = ctx.input.thresholds;
  const final = rungs.at(-1);
  if (final === undefined || writer.rung !== final || failure?.kind !== 'transient' || !failure.retryable) return null;
  const step = rungs.length > 1 ? final - (rungs.at(-2) ?? 0) : final;
  const gate = Math.min(writer.firedAt + step, ctx.input.maxAllowed);
  return gate > writer.firedAt ? gate : null;
}

function settle(ctx: SessionContext, event: Extract<SessionEvent, { type: 'writer.settled' }>, effects: SessionEffect[]): SessionContext {
  const writer = ctx.writer;
  // A settlement for a writer that is not the running one (duplicate delivery, stale) changes nothing.
  if (writer === null || writer.writerId !== event.writerId) return ctx;
  const watermark = event.outcome === 'success' ? writer.boundary : ctx.watermark;
  const lastOutcome: LastOutcome = {
    writerId: writer.writerId,
    outcome: event.outcome,
    failure: event.failure ?? null,
    reason: event.reason ?? null,
  };
  effects.push({
    kind: 'publish',
    event: {
      type: 'writer.settled',
      writer_id: writer.writerId,
      outcome: event.outcome,
      ...(event.failure !== undefined ? { failure: event.failure } : {}),
      watermark,
    },
  });
  const gate = event.outcome === 'failure' ? recoveryGateAfter(ctx, writer, event.failure) : null;
  let next: SessionContext = { ...ctx, watermark, lastOutcome, writer: null, pending: null, recoveryGate: gate ?? ctx.recoveryGate };
  if (ctx.pending !== null && ctx.closeRequestId === null) {
    // The pending request is evaluated against the conversation as it is now.
    [next] = requestWriter(next, 'pending', effects);
  }
  if (next.writer === null) effects.push({ kind: 'publish', event: { type: 'status', text: '' } });
  return next;
}

/** One timer per close request, so a late firing of an earlier close's timer never cancels a later close's writer. */
function closeTimerId(ctx: SessionContext, requestId: string | null = ctx.closeRequestId): string {
  return `${ctx.input.sessionId}-close-${requestId ?? 'none'}`;
}

/** Folds one event into the session context. Pure: same context and event, same result. */
export function planSessionEvent(ctx: SessionContext, event: SessionEvent): Plan {
  const effects: SessionEffect[] = [];
  switch (event.type) {
    case 'session.resumed':
      return { context: { ...ctx, closed: false, draining: false }, effects };
    case 'messages.appended':
      return { context: append(ctx, event, effects), effects };
    case 'tasks.replaced':
      return { context: { ...ctx, tasks: event.tasks }, effects };
    case 'checkpoint.requested': {
      const [context, res] = requestWriter(ctx, 'manual', effects);
      effects.push({ kind: 'reply', requestId: event.requestId, body: { result: res.result, ...(res.reason ? { reason: res.reason } : {}) } });
      return { context, effects };
    }
    case 'writer.settled': {
      const context = rebuildAfterSettle(settle(ctx, event, effects), event, effects);
      if (ctx.closeRequestId !== null && context.writer === null) {
        effects.push({ kind: 'timer.cancel', timerId: closeTimerId(ctx) });
        effects.push({ kind: 'reply', requestId: ctx.closeRequestId, body: { closed: true } });
        return { context: { ...context, closeRequestId: null, closed: true }, effects };
      }
      return { context, effects };
    }
    case 'drain.requested':
      return { context: { ...ctx, pending: null, draining: true }, effects };
    case 'drain.lifted':
      return { context: { ...ctx, draining: false }, effects };
    case 'close.requested': {
      // One close at a time: the runtime refuses a second one while closing, so this only guards the machine.
      if (ctx.closeRequestId !== null) {
        effects.push({ kind: 'reply', requestId: event.requestId, body: { closed: false, reason: 'already closing' } });
        return { context: ctx, effects };
      }
      if (ctx.writer === null) {
        effects.push({ kind: 'reply', requestId: event.requestId, body: { closed: true } });
        return { context: { ...ctx, pending: null, closed: true }, effects };
      }
      // The running writer is drained first (cancelled if it takes longer than the request's wait); a queued request
      // is dropped.
      effects.push({ kind: 'timer.start', timerId: closeTimerId(ctx, event.requestId), ms: event.waitMs });
      return { context: { ...ctx, pending: null, closeRequestId: event.requestId }, effects };
    }
    case 'timer.fired': {
      if (event.timerId.startsWith(`${ctx.input.sessionId}-close-`)) {
        // Only the current close's timer cancels the writer; a stale one changes nothing.
        if (ctx.closeRequestId !== null && event.timerId === closeTimerId(ctx) && ctx.writer !== null) {
          effects.push({ kind: 'writer.cancel', writerId: ctx.writer.writerId, reason: 'session closing' });
        }
        return { context: ctx, effects };
      }
      return { context: onRebuildEvent(ctx, event, effects) ?? ctx, effects };
    }
    default: {
      const context = onRebuildEvent(ctx, event, effects);
      return { context: context ?? ctx, effects };
    }
  }
}
