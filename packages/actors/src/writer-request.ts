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
 * Decides a request for the writer slot (reference §7.6-I): switches off or draining skip it, a running writer queues
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

/** Guard: a request now starts a writer. */
export function canStartWriter(ctx: SessionContext): boolean {
  return claimWriterSlot(ctx).result === 'started';
}

/** Guard: a request now queues behind the running writer (or replaces the pending one). */
export function canQueueRequest(ctx: SessionContext): boolean {
  return claimWriterSlot(ctx).result === 'queued';
}
