import type { RebuildOutcome } from '@baton/protocol';
import { NO_CONTENT, addCounts, calibratedTokens, countsOfMessage, observe } from './calibration.ts';
import { computeBoundaryIndex, type MessageIndexEntry } from './boundary.ts';
import { indexEntries, indexFromEntries } from './index-list.ts';
import type { RebuildInProgress, SessionContext } from './session-context.ts';
import type { SessionEvent } from './session-events.ts';
import { watermarkAfter } from './session-slot.ts';
import type { Emit, Events, SessionStep } from './session-step.ts';
import { canStartWriter, writerDueAfterFailures } from './writer-request.ts';

/**
 * The rebuild decision chain and its results: guards and action bodies of the rebuild
 * region's transitions (idle → waiting | rendering | compacting → idle).
 */

/** Status texts shown to the user for each outcome. */
export const REBUILD_STATUS: Readonly<Record<RebuildOutcome, string>> = {
  rebuilt: 'Context rebuilt from the latest checkpoint.',
  compacted: 'No checkpoint could be written in time, so the conversation was compacted instead; earlier messages were summarised.',
  'insert-failed': 'A checkpoint exists but the context could not be rebuilt from it; the conversation was left as it was.',
  'checkpoint-off': 'Checkpointing is off, so the conversation was compacted instead of rebuilt. Nothing is broken; enable checkpoints to restore continuity.',
  'memory-write-off': 'Memory writing is off (memory.disable_write), so the conversation was compacted instead of rebuilt. Set memory.disable_write to false to restore continuity.',
};

/** The rebuild in progress; the rebuild region is not idle whenever an action below runs. */
function current(ctx: SessionContext): RebuildInProgress {
  if (ctx.rebuild === null) throw new Error('rebuild action taken without a rebuild in progress');
  return ctx.rebuild;
}

/**
 * Whether the checkpoint file says where the context stands: a writer of this session set the watermark, or the
 * session started from the checkpoint of the session it continues (then everything of its own is the tail).
 */
function checkpointCovers(ctx: SessionContext, watermark: string | null = ctx.watermark): boolean {
  return watermark !== null || ctx.input.inheritedCheckpoint === true;
}

/** Guard: the watermark (or an inherited checkpoint) and checkpoint.md exist: only an in-flight writer is awaited. */
export function hasUsableCheckpoint(ctx: SessionContext, event: Events<'rebuild.requested'>): boolean {
  return checkpointCovers(ctx) && event.checkpointExists;
}

/**
 * Guard: the rebuild has to ask the (free) writer slot for a writer — the slot region starts it in the same step. Not
 * for the agent's own compaction (answered at once), nor while writers that failed in a row back rebuilds off.
 */
export function rebuildNeedsWriter(ctx: SessionContext, event: Events<'rebuild.requested'>): boolean {
  return (
    ctx.input.checkpointEnabled &&
    !ctx.input.memoryWriteDisabled &&
    !hasUsableCheckpoint(ctx, event) &&
    event.reason !== 'compaction' &&
    writerDueAfterFailures(ctx, ctx.rebuildsSinceFailure + 1) &&
    canStartWriter(ctx)
  );
}

/**
 * Guard: the agent asked its model for a summary and no checkpoint can answer it: it is answered at once from the
 * conversation (an extractive summary, no model call), never after waiting for a writer. A writer catches up after.
 */
export function answersAtOnce(ctx: SessionContext, event: Events<'rebuild.requested'>): boolean {
  return event.reason === 'compaction' && !hasUsableCheckpoint(ctx, event);
}

/** Guard: the settlement is the one of the writer the rebuild waits for. */
export function isAwaitedWriter(ctx: SessionContext, settled: Events<'writer.settled'>): boolean {
  return ctx.rebuild?.writerId === settled.writerId;
}

/** Guard: once the awaited writer settled there is a checkpoint to render (any outcome if one was usable before). */
export function rendersAfterSettle(ctx: SessionContext, settled: Events<'writer.settled'>): boolean {
  return (current(ctx).mode === 'usable' || settled.outcome === 'success') && checkpointCovers(ctx, watermarkAfter(ctx, settled));
}

/** Guard: the timer is the one of the current wait (a late one of a finished wait changes nothing). */
export function isWaitTimer(ctx: SessionContext, fired: Events<'timer.fired'>): boolean {
  return ctx.rebuild?.timerId === fired.timerId;
}

/** Guard: after a wait that ran out, what is on disk can be rendered (a checkpoint was usable before the wait). */
export function rendersOnTimeout(ctx: SessionContext): boolean {
  return current(ctx).mode === 'usable' && checkpointCovers(ctx);
}

/** Guard: a result or an abandonment of the rebuild in progress (not a late one of an earlier request). */
export function isCurrentRebuild(ctx: SessionContext, event: Events<'rebuild.rendered' | 'rebuild.compacted' | 'rebuild.abandoned'>): boolean {
  return ctx.rebuild?.requestId === event.requestId;
}

/** Starts a rebuild for the request; the next action decides how it goes on (wait, render or compact). */
export const beginRebuild: SessionStep<Events<'rebuild.requested'>, { readonly mode: RebuildInProgress['mode'] }> = (ctx, event, emit, { mode }) => {
  // The agent's own compaction is answered from the checkpoint: its session's watchers learn so.
  if (event.reason === 'compaction') emit({ kind: 'publish', event: { type: 'status', text: "Answering the agent's compaction from the checkpoint…" } });
  return {
    ...ctx,
    ...afterRefusal(ctx, event),
    rebuildSeq: ctx.rebuildSeq + 1,
    rebuildsSinceFailure: ctx.failedWriters > 0 ? ctx.rebuildsSinceFailure + 1 : ctx.rebuildsSinceFailure,
    rebuild: {
      requestId: event.requestId,
      reason: event.reason,
      phase: 'waiting',
      mode,
      writerId: null,
      timerId: null,
      compactOutcome: 'compacted',
      ...(event.selfContained === true ? { selfContained: true } : {}),
    },
  };
};

/** When the provider counts more than the calibration predicted and says nothing of how much more. */
const UNKNOWN_EXCESS = 1.25;

/**
 * The provider refused the agent's request as too long: that request did not fit (counted), and what the provider
 * counted for it (or, when its error did not say, a quarter more than predicted) is a report the calibration learns
 * from before the rebuild is fitted. The refused request answered nothing, so no later report is compared with it.
 */
function afterRefusal(ctx: SessionContext, event: Events<'rebuild.requested'>): Partial<SessionContext> {
  if (event.providerRefused === undefined) return {};
  const counts = addCounts({ text: ctx.input.overheadTokens ?? 0, tool: 0, images: 0 }, ctx.counts);
  const observed = event.providerRefused.tokens ?? Math.ceil(calibratedTokens(ctx.calibration, counts) * UNKNOWN_EXCESS);
  return { calibration: observe(ctx.calibration, { observed, counts }, null), lastObservation: null, overWindow: ctx.overWindow + 1 };
}

/** One rebuild at a time; the runtime refuses a second one before logging it, so this only guards the machine. */
export const refuseRebuild: SessionStep<Events<'rebuild.requested'>> = (ctx, event, emit) => {
  emit({ kind: 'rebuild.reply', requestId: event.requestId, outcome: 'insert-failed', coveredUpTo: null, statusText: 'A rebuild is already in progress.', withContext: false });
  return ctx;
};

/** Waits for the running writer, with a logged timer of `ms`. */
export const awaitWriter: SessionStep<SessionEvent, { readonly ms: number }> = (ctx, _event, emit, { ms }) => {
  const rebuild = current(ctx);
  const timerId = `${ctx.input.sessionId}-rebuild${ctx.rebuildSeq}-wait`;
  emit({ kind: 'timer.start', timerId, ms });
  // Waiting for a checkpoint to be written keeps the writer's "Writing checkpoint…" status;
  // only a wait before rendering a usable checkpoint is "Preparing conversation context…".
  if (rebuild.mode === 'usable') emit({ kind: 'publish', event: { type: 'status', text: 'Preparing conversation context…' } });
  return { ...ctx, rebuild: { ...rebuild, phase: 'waiting', timerId, writerId: ctx.writer?.writerId ?? null } };
};

/** The writer settled first: its wait timer is cancelled. */
export const cancelWaitTimer: SessionStep = (ctx, _event, emit) => {
  const { timerId } = current(ctx);
  if (timerId !== null) emit({ kind: 'timer.cancel', timerId });
  return ctx;
};

/**
 * Renders the boundary message from the memory files and cuts the tail after the watermark (in the worker); an
 * inherited checkpoint without a watermark of this session's own keeps the whole context as the tail.
 */
export const renderRebuild: SessionStep = (ctx, _event, emit) => {
  const rebuild = current(ctx);
  if (!checkpointCovers(ctx)) throw new Error('renderRebuild taken without a watermark');
  emit({ kind: 'rebuild.render', requestId: rebuild.requestId, watermark: ctx.watermark, ...(rebuild.selfContained === true ? { selfContained: true } : {}) });
  return { ...ctx, rebuild: { ...rebuild, phase: 'rendering', timerId: null } };
};

/** Summarises the conversation up to the boundary a writer would cover (in the worker); `outcome` is reported. */
export const compactRebuild: SessionStep<SessionEvent, { readonly outcome: RebuildInProgress['compactOutcome'] }> = (ctx, _event, emit, { outcome }) => {
  const rebuild = current(ctx);
  const index = indexEntries(ctx.index);
  const b = computeBoundaryIndex(index, ctx.input.tail);
  emit({ kind: 'rebuild.compact', requestId: rebuild.requestId, boundary: b >= 0 ? (index[b]?.id ?? null) : null });
  return { ...ctx, rebuild: { ...rebuild, phase: 'compacting', compactOutcome: outcome, timerId: null } };
};

/**
 * Re-bases the session on its new context: the boundary message then the preserved tail, with the counts of the tail
 * messages the rebuild sends otherwise (`adjusted`: an output cleared, a text cut); the ladder re-arms, and the
 * calibration learns from the new context's first report on its own (the change from the old one means nothing).
 */
function rebase(ctx: SessionContext, event: Events<'rebuild.rendered' | 'rebuild.compacted'>, boundary: MessageIndexEntry): SessionContext {
  const keep = new Set(event.tailIds);
  const adjusted = new Map((event.adjusted ?? []).map((a) => [a.id, a]));
  const tail = indexEntries(ctx.index).flatMap((m): MessageIndexEntry[] => {
    if (!keep.has(m.id)) return [];
    const a = adjusted.get(m.id);
    if (a === undefined) return [m];
    const { images: _images, ...rest } = m;
    return [{ ...rest, tokens: a.tokens, ...(a.images !== undefined && a.images > 0 ? { images: a.images } : {}) }];
  });
  const entries = [boundary, ...tail];
  const counts = entries.reduce((sum, m) => addCounts(sum, countsOfMessage(m)), NO_CONTENT);
  return {
    ...ctx,
    index: indexFromEntries(entries),
    crossed: [],
    recoveryGate: null,
    usageRecovered: true,
    counts,
    lastObservation: null,
    // A writer already running covers no more than the old context: the catch-up is still due.
    catchUp: event.catchUp === true ? boundary.id : null,
  };
}

/** Answers the request and publishes the outcome; the rebuild is over. */
function finish(ctx: SessionContext, outcome: RebuildOutcome, coveredUpTo: string | null, withContext: boolean, emit: Emit): SessionContext {
  const { requestId } = current(ctx);
  emit({ kind: 'rebuild.reply', requestId, outcome, coveredUpTo, statusText: REBUILD_STATUS[outcome], withContext });
  emit({ kind: 'publish', event: { type: 'rebuild.completed', outcome, covered_up_to: coveredUpTo } });
  emit({ kind: 'publish', event: { type: 'status', text: ctx.writer !== null ? 'Writing checkpoint…' : '' } });
  return { ...ctx, rebuild: null };
}

export function renderSucceeded(event: Events<'rebuild.rendered'>): boolean {
  return event.ok && event.boundary !== undefined;
}

/** The session continues from the rendered boundary message and the tail after the watermark. */
export const adoptRenderedContext: SessionStep<Events<'rebuild.rendered'>> = (ctx, event, emit) => {
  if (event.boundary === undefined) throw new Error('adoptRenderedContext taken without a boundary message');
  return finish(rebase(ctx, event, event.boundary), 'rebuilt', ctx.watermark, true, emit);
};

/** The checkpoint could not be rendered: the conversation is left as it was. */
export const answerRenderFailed: SessionStep<Events<'rebuild.rendered'>> = (ctx, _event, emit) => finish(ctx, 'insert-failed', null, false, emit);

/** The session continues from the summary and the preserved tail. */
export const adoptCompactedContext: SessionStep<Events<'rebuild.compacted'>> = (ctx, event, emit) => {
  const covered = coveredBefore(indexEntries(ctx.index), event.tailIds);
  return finish(rebase(ctx, event, event.boundary), current(ctx).compactOutcome, covered, true, emit);
};

/** A rebuild whose requester is gone (the daemon restarted while it ran): dropped without an answer. */
export const abandonRebuild: SessionStep<Events<'rebuild.abandoned'>> = (ctx, _event, emit) => {
  const { timerId } = current(ctx);
  if (timerId !== null) emit({ kind: 'timer.cancel', timerId });
  return { ...ctx, rebuild: null };
};

/** The newest message not in the tail: what the summary covered. */
function coveredBefore(index: readonly MessageIndexEntry[], tailIds: readonly string[]): string | null {
  const keep = new Set(tailIds);
  for (let i = index.length - 1; i >= 0; i--) {
    const m = index[i];
    if (m !== undefined && !keep.has(m.id)) return m.id;
  }
  return null;
}
