import type { SessionEffect } from '@baton/actors';
import type { SessionRecord } from '@baton/log-schema';
import { assertNever } from '../assert-never.ts';
import { groupDigits, shortWriterId } from './numbers.ts';

type Decision = Extract<SessionRecord, { type: 'decision' }>['payload'];

/** Facts of one session effect, as recorded in a `decision` (null when another effect of the decision says it). */
export function effectFacts(effect: SessionEffect, sessionId: string): string | null {
  const w = (id: string): string => shortWriterId(id, sessionId);
  switch (effect.kind) {
    case 'writer.start':
      return `✎ start writer ${w(effect.writerId)} (${effect.mode} mode, covers up to ${effect.boundary}, trigger ${effect.trigger})`;
    case 'reply':
      return `reply to request ${effect.requestId.slice(0, 8)}`;
    case 'publish': {
      const event = effect.event;
      switch (event.type) {
        case 'threshold.crossed':
          return `⟶ threshold ${groupDigits(event.threshold)} crossed at ${groupDigits(event.tokens)} tokens`;
        case 'writer.settled':
          return `✓ writer ${w(event.writer_id)} settled: ${event.outcome}${event.failure !== undefined ? ` (${event.failure.kind})` : ''}, watermark ${event.watermark ?? '–'}`;
        case 'writer.queued':
          return 'writer queued';
        case 'status':
          return event.text === '' ? 'status idle' : `status "${event.text}"`;
        case 'writer.started':
          return null; // the writer.start effect next to it says the same
        case 'rebuild.completed':
          return `rebuild ${event.outcome}${event.covered_up_to !== null ? `, covers up to ${event.covered_up_to}` : ''}`;
        default:
          return assertNever(event, 'published event');
      }
    }
    case 'timer.start':
      return `timer ${effect.timerId} in ${groupDigits(effect.ms)} ms`;
    case 'timer.cancel':
      return `cancel timer ${effect.timerId}`;
    case 'writer.cancel':
      return `✗ cancel writer ${w(effect.writerId)} (${effect.reason})`;
    case 'rebuild.render':
      return `render the rebuilt context from ${effect.watermark === null ? 'the inherited checkpoint' : `watermark ${effect.watermark}`}${effect.selfContained === true ? ' (self-contained: no file paths)' : ''}`;
    case 'rebuild.compact':
      return `compact the conversation up to ${effect.boundary ?? 'its end'}`;
    case 'rebuild.reply':
      return `answer rebuild ${effect.requestId.slice(0, 8)}: ${effect.outcome}`;
    default:
      return assertNever(effect, 'session effect');
  }
}

/** Facts of a `decision` record: the input it answers, the resulting state, and its effects. */
export function decisionFacts(decision: Decision, sessionId: string): string {
  const { state } = decision;
  const parts = [`for #${decision.for}: tokens ${groupDigits(state.tokens)}, writer ${state.writer}`];
  if (state.watermark !== null) parts[0] += `, watermark ${state.watermark}`;
  if (state.overflow) parts[0] += ', OVERFLOW';
  if (state.closed) parts[0] += ', closed';
  for (const effect of decision.effects) {
    const fact = effectFacts(effect, sessionId);
    if (fact !== null) parts.push(fact);
  }
  return parts.join('; ');
}
