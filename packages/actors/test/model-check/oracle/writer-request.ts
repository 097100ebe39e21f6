/**
 * TEST ORACLE, not production code: a frozen copy of `src/writer-request.ts` at commit acaaad3, part of the pure reducer
 * the session and writer machines delegated every event to before their states became real transitions.
 * `reducer-equivalence.test.ts` folds the same events through the machines and through this copy and requires
 * equal contexts and equal effects in the same order. Never edit it to make a test pass.
 */
import { computeBoundaryIndex, deltaStartIndex } from '../../../src/boundary.ts';
import type { SessionContext } from './session-context.ts';
import type { WriterTrigger } from '@baton/protocol';
import type { SessionEffect } from '../../../src/session-effects.ts';

export type RequestResult = { result: 'started' | 'queued' | 'skipped'; reason?: string };

/**
 * Tries to claim the writer slot for one request. The slot is claimed in the same step that decides to start
 * , so two requests can never both start a writer.
 */
export function requestWriter(ctx: SessionContext, trigger: WriterTrigger, effects: SessionEffect[], rung: number | null = null): [SessionContext, RequestResult] {
  const { input } = ctx;
  if (!input.checkpointEnabled) return [ctx, { result: 'skipped', reason: 'checkpoint disabled' }];
  if (input.memoryWriteDisabled) return [ctx, { result: 'skipped', reason: 'memory.disable_write is true' }];
  if (ctx.draining) return [ctx, { result: 'skipped', reason: 'the daemon is draining' }];
  if (ctx.writer !== null) {
    effects.push({ kind: 'publish', event: { type: 'writer.queued' } });
    return [{ ...ctx, pending: trigger }, { result: 'queued', reason: ctx.pending === null ? 'writer running' : 'replaced pending request' }];
  }
  if (ctx.index.length === 0) return [ctx, { result: 'skipped', reason: 'main slice is empty' }];
  const b = computeBoundaryIndex(ctx.index, input.tail);
  const boundary = b >= 0 ? ctx.index[b] : undefined;
  if (boundary === undefined) return [ctx, { result: 'skipped', reason: 'no boundary keeps tool calls with their results' }];
  let deltaFrom: string | null = null;
  if (!input.fork) {
    const start = deltaStartIndex(ctx.index, ctx.watermark);
    const wIdx = ctx.watermark === null ? -1 : ctx.index.findIndex((m) => m.id === ctx.watermark);
    if (start > b || (wIdx >= b && wIdx >= 0)) return [ctx, { result: 'skipped', reason: 'nothing new since the watermark' }];
    deltaFrom = ctx.index[start]?.id ?? null;
  }
  const writerId = `${input.sessionId}-w${ctx.writerSeq + 1}`;
  const mode = input.fork ? 'fork' : 'delta';
  effects.push({ kind: 'writer.start', writerId, boundary: boundary.id, mode, deltaFrom, trigger, watermark: ctx.watermark });
  effects.push({
    kind: 'publish',
    event: {
      type: 'writer.started',
      writer_id: writerId,
      covers_up_to: boundary.id,
      mode,
      trigger,
      ...(input.forkUnavailableReason !== null && !input.fork ? { reason: input.forkUnavailableReason } : {}),
    },
  });
  effects.push({ kind: 'publish', event: { type: 'status', text: 'Writing checkpoint…' } });
  return [
    { ...ctx, writer: { writerId, boundary: boundary.id, mode, trigger, rung, firedAt: ctx.tokens }, writerSeq: ctx.writerSeq + 1 },
    { result: 'started' },
  ];
}
