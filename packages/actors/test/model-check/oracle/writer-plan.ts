/**
 * TEST ORACLE, not production code: a frozen copy of `src/writer-plan.ts` at commit acaaad3, part of the pure reducer
 * the session and writer machines delegated every event to before their states became real transitions.
 * `reducer-equivalence.test.ts` folds the same events through the machines and through this copy and requires
 * equal contexts and equal effects in the same order. Never edit it to make a test pass.
 */
import type { WriterOutcome } from '@baton/protocol';
import type { Failure } from '../../../src/session-events.ts';
import type { WriterEffect, WriterPerf } from '../../../src/writer-effects.ts';
import type { WriterEvent, WriterInput } from '../../../src/writer-events.ts';

export type WriterPhase = 'preparing' | 'calling' | 'tools' | 'validating' | 'committing' | 'settled';

export interface WriterContext {
  readonly input: WriterInput;
  readonly phase: WriterPhase;
  /** LLM calls made so far. */
  readonly calls: number;
  readonly reentries: number;
  /** Reminders sent after empty or reasoning-only stops since the last (re-)entry. */
  readonly continuations: number;
  readonly perf: WriterPerf;
  readonly outcome: WriterOutcome | null;
  readonly failure: Failure | null;
}

export function initialWriterContext(input: WriterInput): WriterContext {
  return {
    input,
    phase: 'preparing',
    calls: 0,
    reentries: 0,
    continuations: 0,
    perf: { calls: 0, promptTokens: 0, cachedTokens: 0 },
    outcome: null,
    failure: null,
  };
}

export interface WriterPlan {
  readonly context: WriterContext;
  readonly effects: readonly WriterEffect[];
}

function settle(ctx: WriterContext, outcome: WriterOutcome, failure: Failure | null, reason: string | null, effects: WriterEffect[]): WriterContext {
  effects.push({ kind: 'settle', outcome, failure, reason, perf: ctx.perf });
  return { ...ctx, phase: 'settled', outcome, failure };
}

function call(ctx: WriterContext, nudge: Extract<WriterEffect, { kind: 'model.call' }>['nudge'], effects: WriterEffect[]): WriterContext {
  effects.push({ kind: 'model.call', call: ctx.calls + 1, nudge });
  return { ...ctx, phase: 'calling', calls: ctx.calls + 1 };
}

/** Folds one writer event. Events that do not fit the current phase (duplicates, late results) change nothing. */
export function planWriterEvent(ctx: WriterContext, event: WriterEvent): WriterPlan {
  const effects: WriterEffect[] = [];
  if (ctx.phase === 'settled') return { context: ctx, effects };
  if (event.type === 'writer.cancel') return { context: settle(ctx, 'cancelled', { kind: 'cancelled', retryable: false, message: event.reason }, event.reason, effects), effects };
  switch (ctx.phase) {
    case 'preparing':
      if (event.type === 'writer.prepared') return { context: call(ctx, null, effects), effects };
      if (event.type === 'writer.prepare_failed') {
        return { context: settle(ctx, event.outcome, event.failure ?? null, event.reason, effects), effects };
      }
      break;
    case 'calling':
      if (event.type === 'model.failed') return { context: settle(ctx, 'failure', event.failure, event.failure.message ?? null, effects), effects };
      if (event.type === 'model.replied') {
        const perf: WriterPerf = {
          calls: ctx.perf.calls + 1,
          promptTokens: ctx.perf.promptTokens + event.usage.prompt,
          cachedTokens: ctx.perf.cachedTokens + event.usage.cached,
        };
        const next = { ...ctx, perf };
        if (event.toolCalls.length > 0) {
          effects.push({ kind: 'tools.run', calls: event.toolCalls });
          return { context: { ...next, phase: 'tools' }, effects };
        }
        if ((event.content ?? '').trim() !== '') {
          effects.push({ kind: 'validate' });
          return { context: { ...next, phase: 'validating' }, effects };
        }
        // Empty or reasoning-only stop: remind the writer, at most maxContinuations times.
        if (next.continuations >= next.input.maxContinuations) {
          const failure: Failure = { kind: 'other', retryable: false, message: `no completion after ${next.continuations} reminders` };
          return { context: settle(next, 'failure', failure, failure.message ?? null, effects), effects };
        }
        const cont = { ...next, continuations: next.continuations + 1 };
        effects.push({ kind: 'reentered', iteration: cont.continuations, reason: 'continuation' });
        return { context: call(cont, { kind: 'continuation' }, effects), effects };
      }
      break;
    case 'tools':
      if (event.type === 'tools.completed') return { context: call(ctx, null, effects), effects };
      break;
    case 'validating':
      if (event.type === 'validation.completed') {
        if (event.errors.length === 0 && event.extract.length === 0) {
          effects.push({ kind: 'commit', warnings: event.warnings });
          return { context: { ...ctx, phase: 'committing' }, effects };
        }
        if (ctx.reentries < ctx.input.maxReentries) {
          // Extraction comes before structural errors: errors are re-checked after the extraction turn.
          const nudge = event.extract.length > 0 ? ({ kind: 'extraction', details: event.extract } as const) : ({ kind: 'validation', details: event.errors } as const);
          const next = { ...ctx, reentries: ctx.reentries + 1, continuations: 0 };
          effects.push({ kind: 'reentered', iteration: next.reentries, reason: nudge.kind });
          return { context: call(next, nudge, effects), effects };
        }
        if (event.errors.length > 0) {
          effects.push({ kind: 'quarantine', errors: event.errors });
          const failure: Failure = { kind: 'validation', retryable: false, message: event.errors.join('; ') };
          return { context: settle(ctx, 'failure', failure, 'structural errors remain after the last re-entry', effects), effects };
        }
        effects.push({ kind: 'commit', warnings: [...event.warnings, ...event.extract] });
        return { context: { ...ctx, phase: 'committing' }, effects };
      }
      break;
    case 'committing':
      if (event.type === 'commit.completed') return { context: settle(ctx, 'success', null, null, effects), effects };
      if (event.type === 'commit.failed') {
        return { context: settle(ctx, 'failure', { kind: 'other', retryable: false, message: event.message }, event.message, effects), effects };
      }
      break;
  }
  return { context: ctx, effects };
}
