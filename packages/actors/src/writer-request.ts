import type { WriterMode } from '@baton/protocol';
import { computeBoundaryIndex, deltaStartIndex } from './boundary.ts';
import { indexEntries } from './index-list.ts';
import type { SessionContext } from './session-context.ts';

/** What a request for a writer does in the current context: start one, queue behind the running one, or nothing. */
export type SlotClaim =
  | { readonly result: 'started'; readonly writerId: string; readonly boundary: string; readonly mode: WriterMode; readonly deltaFrom: string | null }
  | { readonly result: 'queued' }
  | { readonly result: 'skipped'; readonly reason: string };

/**
 * Decides a request for the writer slot: switches off or draining skip it, a running writer queues
 * it, otherwise a writer starts when the main slice has a boundary (and, in delta mode, something new since the
 * watermark). The machine claims the slot in the same transition that decides to start, so two requests can never
 * both start a writer.
 */
export function claimWriterSlot(ctx: SessionContext): SlotClaim {
  const { input } = ctx;
  if (!input.checkpointEnabled) return { result: 'skipped', reason: 'checkpoint disabled' };
  if (input.memoryWriteDisabled) return { result: 'skipped', reason: 'memory.disable_write is true' };
  if (ctx.draining) return { result: 'skipped', reason: 'the daemon is draining' };
  if (ctx.writer !== null) return { result: 'queued' };
  if (ctx.index.length === 0) return { result: 'skipped', reason: 'main slice is empty' };
  const index = indexEntries(ctx.index);
  const b = computeBoundaryIndex(index, input.tail);
  const boundary = b >= 0 ? index[b] : undefined;
  if (boundary === undefined) return { result: 'skipped', reason: 'no boundary keeps tool calls with their results' };
  let deltaFrom: string | null = null;
  if (!input.fork) {
    const start = deltaStartIndex(index, ctx.watermark);
    const wIdx = ctx.watermark === null ? -1 : index.findIndex((m) => m.id === ctx.watermark);
    if (start > b || (wIdx >= b && wIdx >= 0)) return { result: 'skipped', reason: 'nothing new since the watermark' };
    deltaFrom = index[start]?.id ?? null;
  }
  return { result: 'started', writerId: `${input.sessionId}-w${ctx.writerSeq + 1}`, boundary: boundary.id, mode: input.fork ? 'fork' : 'delta', deltaFrom };
}

/** Most rebuilds between two tries after writers failed in a row (the period doubles with each failure up to it). */
export const MAX_BACKOFF_REBUILDS = 4;

/** Rebuilds between two tries after `failed` writers failed in a row: 1, 2, then 4. */
export function backoffPeriod(failed: number): number {
  return failed === 0 ? 1 : Math.min(2 ** (failed - 1), MAX_BACKOFF_REBUILDS);
}

/**
 * Whether a rebuild asks for a writer again after writers failed in a row: after one failure at once, after two every
 * second rebuild, after more every fourth. Counted in rebuilds, never in wall time, so a replay decides alike.
 * `rebuilds` is the number of rebuilds since the last failure, this one included.
 */
export function writerDueAfterFailures(ctx: SessionContext, rebuilds: number): boolean {
  return ctx.failedWriters === 0 || rebuilds >= backoffPeriod(ctx.failedWriters);
}

/**
 * A writer that catches the checkpoint up to the boundary a rebuild just inserted (`boundary`, the first entry of the
 * rebased context): the same switches as any request, and the backoff after failures.
 */
export function claimCatchUp(ctx: SessionContext, boundary: string): SlotClaim {
  const { input } = ctx;
  if (!input.checkpointEnabled) return { result: 'skipped', reason: 'checkpoint disabled' };
  if (input.memoryWriteDisabled) return { result: 'skipped', reason: 'memory.disable_write is true' };
  if (ctx.draining) return { result: 'skipped', reason: 'the daemon is draining' };
  if (ctx.writer !== null) return { result: 'queued' };
  if (!writerDueAfterFailures(ctx, ctx.rebuildsSinceFailure)) return { result: 'skipped', reason: 'writers failed: waiting for a later rebuild' };
  return { result: 'started', writerId: `${input.sessionId}-w${ctx.writerSeq + 1}`, boundary, mode: input.fork ? 'fork' : 'delta', deltaFrom: input.fork ? null : boundary };
}

/** Guard: a request now starts a writer. */
export function canStartWriter(ctx: SessionContext): boolean {
  return claimWriterSlot(ctx).result === 'started';
}

/** Guard: a request now queues behind the running writer (or replaces the pending one). */
export function canQueueRequest(ctx: SessionContext): boolean {
  return claimWriterSlot(ctx).result === 'queued';
}
