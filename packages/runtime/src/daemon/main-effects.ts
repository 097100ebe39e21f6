import type { SessionMainEffect } from '@baton/actors';
import type { Encoding, PublishedEventBody, RebuildReply } from '@baton/protocol';
import { assertNever } from '../assert-never.ts';
import type { FoldReply } from '../host/worker-messages.ts';
import type { EffectTimers } from './effect-timers.ts';
import { answerWaiting, type LoadedSession } from './loaded-session.ts';

export interface MainEffectDeps {
  /** Publishes a session event on the transport. */
  publish(sessionId: string, encoding: Encoding, event: PublishedEventBody): void;
  readonly timers: EffectTimers;
}

/**
 * Runs one effect of a fold that belongs on the main thread: publish an event, answer a waiting request (a rebuild's
 * answer carries the new context the fold returned), start or cancel a timer.
 */
export function runMainEffect(session: LoadedSession, effect: SessionMainEffect, fold: FoldReply, deps: MainEffectDeps): void {
  switch (effect.kind) {
    case 'publish':
      deps.publish(session.sessionId, session.encoding, effect.event);
      return;
    case 'reply':
      answerWaiting(session, effect.requestId, effect.body);
      return;
    case 'timer.start':
      deps.timers.start(session.sessionId, effect.timerId, effect.ms);
      return;
    case 'timer.cancel':
      deps.timers.cancel(effect.timerId);
      return;
    case 'rebuild.reply': {
      const body: Omit<RebuildReply, 'ok'> = {
        outcome: effect.outcome,
        covered_up_to: effect.coveredUpTo,
        status_text: effect.statusText,
        context: effect.withContext ? [...(fold.context ?? [])] : [],
      };
      answerWaiting(session, effect.requestId, body);
      return;
    }
    default:
      assertNever(effect, 'session effect');
  }
}
