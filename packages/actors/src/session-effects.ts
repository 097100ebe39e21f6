import type { PublishedEventBody, RebuildOutcome, WriterMode, WriterTrigger } from '@baton/protocol';

/** The protocol events the session machine publishes (the runtime stamps `session_id` and `at`). */
export type SessionPublication = PublishedEventBody<
  'threshold.crossed' | 'writer.started' | 'writer.queued' | 'writer.settled' | 'status' | 'rebuild.completed'
>;

/** A writer the session decided to start: the slot is already claimed in the same transition. */
export interface WriterStartEffect {
  readonly kind: 'writer.start';
  readonly writerId: string;
  /** Index entry id of the newest covered message (frozen). */
  readonly boundary: string;
  readonly mode: WriterMode;
  /** Delta mode: first message id of the slice to send. */
  readonly deltaFrom: string | null;
  readonly trigger: WriterTrigger;
  readonly watermark: string | null;
}

/**
 * Effects run by the session's actor host, in the worker thread that holds the session: they need the session's
 * messages, its memory files or its running writer. Their results come back as logged session inputs.
 */
export type SessionWorkerEffect =
  | WriterStartEffect
  /** Cancel a running writer (a close that waited long enough); its cancellation settles it like any outcome. */
  | { readonly kind: 'writer.cancel'; readonly writerId: string; readonly reason: string }
  /** Render the boundary message from the memory files and cut the tail after the watermark. */
  | { readonly kind: 'rebuild.render'; readonly requestId: string; readonly watermark: string | null; readonly selfContained?: boolean }
  /** Summarise the conversation up to `boundary` (null: all of it) with one model call, or extractively. */
  | { readonly kind: 'rebuild.compact'; readonly requestId: string; readonly boundary: string | null };

/**
 * Effects run on the main thread, which owns the transport, the requests waiting for an answer and the timers.
 */
export type SessionMainEffect =
  | { readonly kind: 'publish'; readonly event: SessionPublication }
  | { readonly kind: 'reply'; readonly requestId: string; readonly body: Record<string, unknown> }
  | { readonly kind: 'timer.start'; readonly timerId: string; readonly ms: number }
  | { readonly kind: 'timer.cancel'; readonly timerId: string }
  /**
   * Answer the rebuild request; `withContext`: attach the session's new context (boundary message + tail), which the
   * worker that folded the event sends along with its effects.
   */
  | {
      readonly kind: 'rebuild.reply';
      readonly requestId: string;
      readonly outcome: RebuildOutcome;
      readonly coveredUpTo: string | null;
      readonly statusText: string;
      readonly withContext: boolean;
    };

/** Effects are data: the runtime executes them after the event that produced them is durable. */
export type SessionEffect = SessionWorkerEffect | SessionMainEffect;

/** Where each kind of session effect runs. A new kind fails to compile until it is placed here. */
export const SESSION_EFFECT_THREAD = {
  'writer.start': 'worker',
  'writer.cancel': 'worker',
  'rebuild.render': 'worker',
  'rebuild.compact': 'worker',
  publish: 'main',
  reply: 'main',
  'timer.start': 'main',
  'timer.cancel': 'main',
  'rebuild.reply': 'main',
} as const satisfies Record<SessionEffect['kind'], 'main' | 'worker'>;

type KindsOn<T extends 'main' | 'worker'> = {
  [K in keyof typeof SESSION_EFFECT_THREAD]: (typeof SESSION_EFFECT_THREAD)[K] extends T ? K : never;
}[keyof typeof SESSION_EFFECT_THREAD];

// The table and the two unions must agree, or the type guards below would lie.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const workerKindsAgree: Same<KindsOn<'worker'>, SessionWorkerEffect['kind']> = true;
const mainKindsAgree: Same<KindsOn<'main'>, SessionMainEffect['kind']> = true;
void workerKindsAgree;
void mainKindsAgree;

export function isWorkerEffect(effect: SessionEffect): effect is SessionWorkerEffect {
  return SESSION_EFFECT_THREAD[effect.kind] === 'worker';
}

export function isMainEffect(effect: SessionEffect): effect is SessionMainEffect {
  return SESSION_EFFECT_THREAD[effect.kind] === 'main';
}
