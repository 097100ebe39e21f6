import type { WriterTrigger } from '@baton/protocol';
import type { LastOutcome, RunningWriter, SessionContext } from './session-context.ts';
import type { SessionEvent } from './session-events.ts';
import { recoveryGateAfter } from './session-rungs.ts';
import type { Emit, Events, SessionStep } from './session-step.ts';
import { canStartWriter, claimCatchUp, claimWriterSlot, type SlotClaim } from './writer-request.ts';

/**
 * The writer slot (at most one running writer, at most one pending request): guards and action bodies of the slot
 * region's transitions.
 */

/** What a checkpoint request is answered. */
export interface CheckpointReply {
  readonly result: 'started' | 'queued' | 'skipped';
  readonly reason?: string;
}

/** Starts a writer in the free slot with its boundary frozen, and announces it. The guards made sure the slot is free. */
export const startWriter: SessionStep<SessionEvent, { readonly trigger: WriterTrigger; readonly rung: number | null }> = (ctx, _event, emit, { trigger, rung }) =>
  startClaimed(ctx, claimWriterSlot(ctx), emit, trigger, rung);

/** Starts the writer that catches the checkpoint up to the boundary message a fitted rebuild inserted (`catchUp`). */
export const startCatchUpWriter: SessionStep = (ctx, _event, emit) => {
  if (ctx.catchUp === null) throw new Error('startCatchUpWriter taken without a catch-up due');
  return startClaimed(ctx, claimCatchUp(ctx, ctx.catchUp), emit, 'rebuild', null);
};

function startClaimed(ctx: SessionContext, claim: SlotClaim, emit: Emit, trigger: WriterTrigger, rung: number | null): SessionContext {
  if (claim.result !== 'started') throw new Error(`startWriter taken while the slot cannot be claimed (${claim.result})`);
  const { writerId, boundary, mode, deltaFrom } = claim;
  const { input } = ctx;
  emit({ kind: 'writer.start', writerId, boundary, mode, deltaFrom, trigger, watermark: ctx.watermark });
  emit({
    kind: 'publish',
    event: {
      type: 'writer.started',
      writer_id: writerId,
      covers_up_to: boundary,
      mode,
      trigger,
      ...(input.forkUnavailableReason !== null && !input.fork ? { reason: input.forkUnavailableReason } : {}),
    },
  });
  emit({ kind: 'publish', event: { type: 'status', text: 'Writing checkpoint…' } });
  // Any writer covers the boundary a rebuild inserted (the context starts with it): a catch-up due is no longer.
  return { ...ctx, writer: { writerId, boundary, mode, trigger, rung, firedAt: ctx.tokens }, writerSeq: ctx.writerSeq + 1, catchUp: null };
}

/** Guard: a catch-up writer is due and can start now (slot free, switches on, not backed off). */
export function catchUpDue(ctx: SessionContext): boolean {
  return ctx.catchUp !== null && claimCatchUp(ctx, ctx.catchUp).result === 'started';
}

/** Queues a request behind the running writer; a newer request replaces the pending one. */
export const queueRequest: SessionStep<SessionEvent, { readonly trigger: WriterTrigger }> = (ctx, _event, emit, { trigger }) => {
  emit({ kind: 'publish', event: { type: 'writer.queued' } });
  return { ...ctx, pending: trigger };
};

export const replyToCheckpoint: SessionStep<Events<'checkpoint.requested'>, CheckpointReply> = (ctx, event, emit, { result, reason }) => {
  emit({ kind: 'reply', requestId: event.requestId, body: { result, ...(reason ? { reason } : {}) } });
  return ctx;
};

/** Answers a checkpoint request the slot refuses (switches off, draining, nothing to cover) with the reason. */
export const refuseCheckpoint: SessionStep<Events<'checkpoint.requested'>> = (ctx, event, emit) => {
  const claim = claimWriterSlot(ctx);
  if (claim.result !== 'skipped') throw new Error(`refuseCheckpoint taken while the request would be ${claim.result}`);
  return replyToCheckpoint(ctx, event, emit, claim);
};

export const dropPendingRequest: SessionStep = (ctx) => ({ ...ctx, pending: null });

/** The daemon stops taking work: the pending request is dropped and no writer starts until the session resumes. */
export const drain: SessionStep = (ctx) => ({ ...ctx, pending: null, draining: true });

/** Guard: the settlement is the running writer's (not a duplicate, stale or unknown one). */
export function isRunningWriter(ctx: SessionContext, settled: Events<'writer.settled'>): boolean {
  return ctx.writer !== null && ctx.writer.writerId === settled.writerId;
}

function settledWriter(ctx: SessionContext, settled: Events<'writer.settled'>): RunningWriter {
  const writer = ctx.writer;
  if (writer === null || writer.writerId !== settled.writerId) throw new Error(`settlement of ${settled.writerId}, which is not the running writer`);
  return writer;
}

/** The watermark once the settlement is folded: a success moves it to the boundary frozen at start. */
export function watermarkAfter(ctx: SessionContext, settled: Events<'writer.settled'>): string | null {
  return isRunningWriter(ctx, settled) && settled.outcome === 'success' ? settledWriter(ctx, settled).boundary : ctx.watermark;
}

/** Frees the slot: records the outcome, publishes it, moves the watermark on success, arms the recovery gate. */
export const settleWriter: SessionStep<Events<'writer.settled'>> = (ctx, event, emit) => {
  const writer = settledWriter(ctx, event);
  const watermark = watermarkAfter(ctx, event);
  const lastOutcome: LastOutcome = { writerId: writer.writerId, outcome: event.outcome, failure: event.failure ?? null, reason: event.reason ?? null };
  emit({
    kind: 'publish',
    event: { type: 'writer.settled', writer_id: writer.writerId, outcome: event.outcome, ...(event.failure !== undefined ? { failure: event.failure } : {}), watermark },
  });
  const gate = event.outcome === 'failure' ? recoveryGateAfter(ctx, writer, event.failure) : null;
  // Failures in a row back the rebuilds' writers off (counted in rebuilds); a success ends it. Cancelled and skipped
  // writers neither count nor end it.
  const failedWriters = event.outcome === 'success' ? 0 : event.outcome === 'failure' ? ctx.failedWriters + 1 : ctx.failedWriters;
  const rebuildsSinceFailure = event.outcome === 'success' || event.outcome === 'failure' ? 0 : ctx.rebuildsSinceFailure;
  return { ...ctx, watermark, lastOutcome, writer: null, pending: null, recoveryGate: gate ?? ctx.recoveryGate, failedWriters, rebuildsSinceFailure };
};

/** Guard: the pending request, evaluated against the conversation as it is once the running writer settled, starts one. */
export function pendingRequestCanStart(ctx: SessionContext, settled: Events<'writer.settled'>): boolean {
  return canStartWriter(settleWriter(ctx, settled, () => {}, undefined));
}

export const publishIdleStatus: SessionStep = (ctx, _event, emit) => {
  emit({ kind: 'publish', event: { type: 'status', text: '' } });
  return ctx;
};
