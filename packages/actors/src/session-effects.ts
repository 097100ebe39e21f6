import type { Failure, WriterOutcome } from './session-events.ts';

/** Protocol events the session publishes (the runtime adds `session_id` and `at`). */
export type PublishedEvent =
  | { type: 'threshold.crossed'; threshold: number; tokens: number }
  | { type: 'writer.started'; writer_id: string; covers_up_to: string; mode: 'fork' | 'delta'; trigger: WriterTrigger; reason?: string }
  | { type: 'writer.queued' }
  | { type: 'writer.settled'; writer_id: string; outcome: WriterOutcome; failure?: Failure; watermark: string | null }
  | { type: 'status'; text: string }
  | { type: 'rebuild.completed'; outcome: RebuildOutcome; covered_up_to: string | null };

export type WriterTrigger = 'threshold' | 'manual' | 'pending' | 'rebuild';

export type RebuildOutcome = 'rebuilt' | 'compacted' | 'insert-failed' | 'checkpoint-off' | 'memory-write-off';

/** A writer the session decided to start: the slot is already claimed in the same transition. */
export interface WriterStartEffect {
  readonly kind: 'writer.start';
  readonly writerId: string;
  /** Index entry id of the newest covered message (frozen). */
  readonly boundary: string;
  readonly mode: 'fork' | 'delta';
  /** Delta mode: first message id of the slice to send. */
  readonly deltaFrom: string | null;
  readonly trigger: WriterTrigger;
  readonly watermark: string | null;
}

/** Effects are data: the runtime executes them after the event that produced them is durable. */
export type SessionEffect =
  | { readonly kind: 'publish'; readonly event: PublishedEvent }
  | WriterStartEffect
  | { readonly kind: 'reply'; readonly requestId: string; readonly body: Record<string, unknown> }
  | { readonly kind: 'timer.start'; readonly timerId: string; readonly ms: number }
  | { readonly kind: 'timer.cancel'; readonly timerId: string }
  /** Cancel a running writer (a close that waited long enough); its cancellation settles it like any outcome. */
  | { readonly kind: 'writer.cancel'; readonly writerId: string; readonly reason: string }
  /** Render the boundary message from the memory files and cut the tail after the watermark. */
  | { readonly kind: 'rebuild.render'; readonly requestId: string; readonly watermark: string }
  /** Summarise the conversation up to `boundary` (null: all of it) with one model call, or extractively. */
  | { readonly kind: 'rebuild.compact'; readonly requestId: string; readonly boundary: string | null }
  /** Answer the rebuild request; `withContext`: attach the session's new context (boundary message + tail). */
  | {
      readonly kind: 'rebuild.reply';
      readonly requestId: string;
      readonly outcome: RebuildOutcome;
      readonly coveredUpTo: string | null;
      readonly statusText: string;
      readonly withContext: boolean;
    };
