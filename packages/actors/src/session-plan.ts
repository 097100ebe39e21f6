import { computeBoundaryIndex, deltaStartIndex, type MessageIndexEntry } from './boundary.ts';
import type { SessionEffect, WriterTrigger } from './session-effects.ts';
import type { Failure, SessionEvent, SessionInput, Task, WriterOutcome } from './session-events.ts';

/** The writer slot: at most one running writer and at most one pending request. */
export type SlotState = 'idle' | 'running' | 'runningPending';

export interface RunningWriter {
  readonly writerId: string;
  readonly boundary: string;
  readonly mode: 'fork' | 'delta';
  readonly trigger: WriterTrigger;
  /** The rung that started this writer, when a threshold did; with the count it fired at. */
  readonly rung: number | null;
  readonly firedAt: number;
}

export interface LastOutcome {
  readonly writerId: string;
  readonly outcome: WriterOutcome;
  readonly failure: Failure | null;
  readonly reason: string | null;
}

/** Session actor context. Holds the per-message index, never message bodies (those live in the log). */
export interface SessionContext {
  readonly input: SessionInput;
  readonly index: readonly MessageIndexEntry[];
  /** Total of the newest finished main-slice assistant message, from the agent's provider usage. */
  readonly tokens: number;
  readonly crossed: readonly number[];
  readonly watermark: string | null;
  readonly writer: RunningWriter | null;
  readonly pending: WriterTrigger | null;
  readonly writerSeq: number;
  readonly lastOutcome: LastOutcome | null;
  readonly tasks: readonly Task[];
  readonly closeRequestId: string | null;
  readonly closed: boolean;
  /** Set by a drain: no new writer starts until the session is resumed. */
  readonly draining: boolean;
  /**
   * Recovery gate (reference §3.6): after a transient failure of the final rung's writer, the count at which the final
   * rung fires once more. Null when not armed.
   */
  readonly recoveryGate: number | null;
}

export function initialSessionContext(input: SessionInput): SessionContext {
  return {
    input,
    index: [],
    tokens: 0,
    crossed: [],
    watermark: null,
    writer: null,
    pending: null,
    writerSeq: 0,
    lastOutcome: null,
    tasks: [],
    closeRequestId: null,
    closed: false,
    draining: false,
    recoveryGate: null,
  };
}

export function slotOf(ctx: SessionContext): SlotState {
  if (ctx.writer === null) return 'idle';
  return ctx.pending === null ? 'running' : 'runningPending';
}

/** Next rung above the current count that has not fired, or null. */
export function nextThreshold(ctx: SessionContext): number | null {
  return ctx.input.thresholds.find((t) => !ctx.crossed.includes(t) && t > ctx.tokens) ?? null;
}

export function isOverflow(ctx: SessionContext): boolean {
  return ctx.input.usableWindow > 0 && ctx.tokens >= ctx.input.usableWindow;
}

/** The result of folding one event: the next context and the effects to run once the event is durable. */
export interface Plan {
  readonly context: SessionContext;
  readonly effects: readonly SessionEffect[];
}

type RequestResult = { result: 'started' | 'queued' | 'skipped'; reason?: string };

/**
 * Tries to claim the writer slot for one request. The slot is claimed in the same step that decides to start
 * (reference §7.6-I fix), so two requests can never both start a writer.
 */
function request(ctx: SessionContext, trigger: WriterTrigger, effects: SessionEffect[], rung: number | null = null): [SessionContext, RequestResult] {
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

function append(ctx: SessionContext, event: Extract<SessionEvent, { type: 'messages.appended' }>, effects: SessionEffect[]): SessionContext {
  const main = event.messages.filter((m) => m.main);
  const index = [
    ...ctx.index,
    ...main.map(({ id, role, tokens, textual, finished, toolCallIds }) => ({ id, role, tokens, textual, finished, toolCallIds })),
  ];
  let tokens = ctx.tokens;
  for (const m of main) if (m.role === 'assistant' && m.finished && m.usageTotal !== null) tokens = m.usageTotal;
  let next: SessionContext = { ...ctx, index, tokens };
  // Rungs are only consumed when a writer could run now: disabled switches and a busy writer leave them armed.
  const canFire = next.input.checkpointEnabled && !next.input.memoryWriteDisabled && !next.draining && next.writer === null;
  if (!canFire) return next;
  const fresh = next.input.thresholds.filter((t) => t <= tokens && !next.crossed.includes(t));
  const gate = next.recoveryGate;
  if (fresh.length === 0) {
    if (gate === null || tokens < gate) return next;
    // The recovery gate re-fires the final rung exactly once.
    const final = next.input.thresholds.at(-1) ?? gate;
    next = { ...next, recoveryGate: null };
    effects.push({ kind: 'publish', event: { type: 'threshold.crossed', threshold: final, tokens } });
    [next] = request(next, 'threshold', effects, final);
    return next;
  }
  next = { ...next, crossed: [...next.crossed, ...fresh] };
  for (const t of fresh) effects.push({ kind: 'publish', event: { type: 'threshold.crossed', threshold: t, tokens } });
  // Several rungs at once: the first starts a writer, the rest collapse into one pending request.
  [next] = request(next, 'threshold', effects, fresh[0] ?? null);
  if (fresh.length > 1) [next] = request(next, 'threshold', effects);
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
    [next] = request(next, 'pending', effects);
  }
  if (next.writer === null) effects.push({ kind: 'publish', event: { type: 'status', text: '' } });
  return next;
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
      const [context, res] = request(ctx, 'manual', effects);
      effects.push({ kind: 'reply', requestId: event.requestId, body: { result: res.result, ...(res.reason ? { reason: res.reason } : {}) } });
      return { context, effects };
    }
    case 'writer.settled': {
      const context = settle(ctx, event, effects);
      if (ctx.closeRequestId !== null && context.writer === null) {
        effects.push({ kind: 'reply', requestId: ctx.closeRequestId, body: { closed: true } });
        return { context: { ...context, closeRequestId: null, closed: true }, effects };
      }
      return { context, effects };
    }
    case 'drain.requested':
      return { context: { ...ctx, pending: null, draining: true }, effects };
    case 'close.requested': {
      if (ctx.writer === null) {
        effects.push({ kind: 'reply', requestId: event.requestId, body: { closed: true } });
        return { context: { ...ctx, pending: null, closed: true }, effects };
      }
      // The running writer is drained first; a queued request is dropped.
      return { context: { ...ctx, pending: null, closeRequestId: event.requestId }, effects };
    }
  }
}
