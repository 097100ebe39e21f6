/**
 * TEST ORACLE, not production code: a frozen copy of `src/session-rebuild.ts` at commit acaaad3, part of the pure reducer
 * the session and writer machines delegated every event to before their states became real transitions.
 * `reducer-equivalence.test.ts` folds the same events through the machines and through this copy and requires
 * equal contexts and equal effects in the same order. Never edit it to make a test pass.
 */
/* eslint-disable @typescript-eslint/switch-exhaustiveness-check -- frozen as written, before the rule existed */
import { computeBoundaryIndex, type MessageIndexEntry } from '../../../src/boundary.ts';
import type { RebuildInProgress } from '../../../src/session-context.ts';
import type { SessionContext } from './session-context.ts';
import type { RebuildOutcome } from '@baton/protocol';
import type { SessionEffect } from '../../../src/session-effects.ts';
import type { SessionEvent } from '../../../src/session-events.ts';
import { requestWriter } from './writer-request.ts';


/** Status texts shown to the user for each outcome. */
export const REBUILD_STATUS: Readonly<Record<RebuildOutcome, string>> = {
  rebuilt: 'Context rebuilt from the latest checkpoint.',
  compacted: 'No checkpoint could be written in time, so the conversation was compacted instead; earlier messages were summarised.',
  'insert-failed': 'A checkpoint exists but the context could not be rebuilt from it; the conversation was left as it was.',
  'checkpoint-off': 'Checkpointing is off, so the conversation was compacted instead of rebuilt. Nothing is broken; enable checkpoints to restore continuity.',
  'memory-write-off': 'Memory writing is off (memory.disable_write), so the conversation was compacted instead of rebuilt. Set memory.disable_write to false to restore continuity.',
};

type Events<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;

function timerId(ctx: SessionContext): string {
  return `${ctx.input.sessionId}-rebuild${ctx.rebuildSeq}-wait`;
}

function compact(ctx: SessionContext, rebuild: RebuildInProgress, outcome: RebuildInProgress['compactOutcome'], effects: SessionEffect[]): SessionContext {
  const b = computeBoundaryIndex(ctx.index, ctx.input.tail);
  effects.push({ kind: 'rebuild.compact', requestId: rebuild.requestId, boundary: b >= 0 ? (ctx.index[b]?.id ?? null) : null });
  return { ...ctx, rebuild: { ...rebuild, phase: 'compacting', compactOutcome: outcome, timerId: null } };
}

function render(ctx: SessionContext, rebuild: RebuildInProgress, effects: SessionEffect[]): SessionContext {
  const watermark = ctx.watermark;
  if (watermark === null) return compact(ctx, rebuild, 'compacted', effects);
  effects.push({ kind: 'rebuild.render', requestId: rebuild.requestId, watermark });
  return { ...ctx, rebuild: { ...rebuild, phase: 'rendering', timerId: null } };
}

function wait(ctx: SessionContext, rebuild: RebuildInProgress, ms: number, effects: SessionEffect[]): SessionContext {
  const id = timerId(ctx);
  effects.push({ kind: 'timer.start', timerId: id, ms });
  // Waiting for a checkpoint to be written keeps the writer's "Writing checkpoint…" status;
  // only a wait before rendering a usable checkpoint is "Preparing conversation context…".
  if (rebuild.mode === 'usable') effects.push({ kind: 'publish', event: { type: 'status', text: 'Preparing conversation context…' } });
  return { ...ctx, rebuild: { ...rebuild, phase: 'waiting', timerId: id, writerId: ctx.writer?.writerId ?? null } };
}

/** The rebuild decision chain, run when a rebuild is requested. */
function requested(ctx: SessionContext, event: Events<'rebuild.requested'>, effects: SessionEffect[]): SessionContext {
  if (ctx.rebuild !== null) {
    // One rebuild at a time; the runtime refuses a second one before logging it, so this is only a guard.
    effects.push({ kind: 'rebuild.reply', requestId: event.requestId, outcome: 'insert-failed', coveredUpTo: null, statusText: 'A rebuild is already in progress.', withContext: false });
    return ctx;
  }
  // The agent's own compaction is announced first among the rebuild's effects (after a writer it starts).
  const announce = (): void => {
    if (event.reason === 'compaction') effects.push({ kind: 'publish', event: { type: 'status', text: "Answering the agent's compaction from the checkpoint…" } });
  };
  const base: SessionContext = { ...ctx, rebuildSeq: ctx.rebuildSeq + 1 };
  const rebuild: RebuildInProgress = { requestId: event.requestId, reason: event.reason, phase: 'waiting', mode: 'needed', writerId: null, timerId: null, compactOutcome: 'compacted' };
  if (!ctx.input.checkpointEnabled || ctx.input.memoryWriteDisabled) {
    announce();
    return compact(base, rebuild, ctx.input.checkpointEnabled ? 'memory-write-off' : 'checkpoint-off', effects);
  }
  if (ctx.watermark !== null && event.checkpointExists) {
    const usable = { ...rebuild, mode: 'usable' as const };
    announce();
    return ctx.writer !== null ? wait(base, usable, Math.min(event.inFlightWaitMs, event.waitMs), effects) : render(base, usable, effects);
  }
  if (ctx.writer !== null) {
    announce();
    return wait(base, rebuild, event.waitMs, effects);
  }
  const [started, res] = requestWriter(base, 'rebuild', effects);
  announce();
  if (res.result !== 'started') return compact(started, rebuild, 'compacted', effects);
  return wait(started, rebuild, event.waitMs, effects);
}

/** Continues a waiting rebuild once the awaited writer settled (called after the settlement was folded). */
export function rebuildAfterSettle(ctx: SessionContext, settled: Events<'writer.settled'>, effects: SessionEffect[]): SessionContext {
  const rebuild = ctx.rebuild;
  if (rebuild === null || rebuild.phase !== 'waiting' || rebuild.writerId !== settled.writerId) return ctx;
  if (rebuild.timerId !== null) effects.push({ kind: 'timer.cancel', timerId: rebuild.timerId });
  if (rebuild.mode === 'usable' || settled.outcome === 'success') return render(ctx, rebuild, effects);
  return compact(ctx, rebuild, 'compacted', effects);
}

/** Re-bases the session on its new context: the boundary message then the preserved tail; the ladder re-arms. */
function rebase(ctx: SessionContext, boundary: MessageIndexEntry, tailIds: readonly string[]): SessionContext {
  const keep = new Set(tailIds);
  const tail = ctx.index.filter((m) => keep.has(m.id));
  return { ...ctx, index: [boundary, ...tail], crossed: [], recoveryGate: null, usageRecovered: true };
}

function finish(ctx: SessionContext, outcome: RebuildOutcome, coveredUpTo: string | null, withContext: boolean, effects: SessionEffect[]): SessionContext {
  const rebuild = ctx.rebuild;
  if (rebuild === null) return ctx;
  effects.push({ kind: 'rebuild.reply', requestId: rebuild.requestId, outcome, coveredUpTo, statusText: REBUILD_STATUS[outcome], withContext });
  effects.push({ kind: 'publish', event: { type: 'rebuild.completed', outcome, covered_up_to: coveredUpTo } });
  effects.push({ kind: 'publish', event: { type: 'status', text: ctx.writer !== null ? 'Writing checkpoint…' : '' } });
  return { ...ctx, rebuild: null };
}

/** Folds the rebuild events; returns null for events this module does not handle. */
export function onRebuildEvent(ctx: SessionContext, event: SessionEvent, effects: SessionEffect[]): SessionContext | null {
  switch (event.type) {
    case 'rebuild.requested':
      return requested(ctx, event, effects);
    case 'timer.fired': {
      const rebuild = ctx.rebuild;
      // A timer that is no longer awaited (the writer settled first) changes nothing.
      if (rebuild === null || rebuild.phase !== 'waiting' || rebuild.timerId !== event.timerId) return ctx;
      // The writer keeps running; the rebuild goes on with what is on disk.
      return rebuild.mode === 'usable' ? render(ctx, rebuild, effects) : compact(ctx, rebuild, 'compacted', effects);
    }
    case 'rebuild.rendered': {
      const rebuild = ctx.rebuild;
      if (rebuild === null || rebuild.phase !== 'rendering' || rebuild.requestId !== event.requestId) return ctx;
      if (!event.ok || event.boundary === undefined) return finish(ctx, 'insert-failed', null, false, effects);
      return finish(rebase(ctx, event.boundary, event.tailIds), 'rebuilt', ctx.watermark, true, effects);
    }
    case 'rebuild.abandoned': {
      const rebuild = ctx.rebuild;
      if (rebuild === null || rebuild.requestId !== event.requestId) return ctx;
      if (rebuild.timerId !== null) effects.push({ kind: 'timer.cancel', timerId: rebuild.timerId });
      return { ...ctx, rebuild: null };
    }
    case 'rebuild.compacted': {
      const rebuild = ctx.rebuild;
      if (rebuild === null || rebuild.phase !== 'compacting' || rebuild.requestId !== event.requestId) return ctx;
      const covered = coveredBefore(ctx.index, event.tailIds);
      return finish(rebase(ctx, event.boundary, event.tailIds), rebuild.compactOutcome, covered, true, effects);
    }
    default:
      return null;
  }
}

/** The newest message not in the tail: what the summary covered. */
function coveredBefore(index: readonly MessageIndexEntry[], tailIds: readonly string[]): string | null {
  const keep = new Set(tailIds);
  for (let i = index.length - 1; i >= 0; i--) {
    const m = index[i];
    if (m !== undefined && !keep.has(m.id)) return m.id;
  }
  return null;
}
