import type { ReentryKind, WriterOutcome } from '@baton/protocol';
import type { Failure } from './session-events.ts';
import type { ToolCall } from './writer-events.ts';

/** Why the writer is called again after its first request. */
export type Nudge =
  | { readonly kind: 'continuation' }
  | { readonly kind: 'validation'; readonly details: readonly string[] }
  | { readonly kind: 'extraction'; readonly details: readonly string[] };

export interface WriterPerf {
  readonly calls: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
}

/** Effects of the writer actor, executed by the host in the worker thread. */
export type WriterEffect =
  | { readonly kind: 'prepare' }
  | { readonly kind: 'model.call'; readonly call: number; readonly nudge: Nudge | null }
  | { readonly kind: 'tools.run'; readonly calls: readonly ToolCall[] }
  | { readonly kind: 'validate' }
  | { readonly kind: 'commit'; readonly warnings: readonly string[] }
  | { readonly kind: 'quarantine'; readonly errors: readonly string[] }
  | { readonly kind: 'reentered'; readonly iteration: number; readonly reason: ReentryKind }
  | {
      readonly kind: 'settle';
      readonly outcome: WriterOutcome;
      readonly failure: Failure | null;
      readonly reason: string | null;
      readonly perf: WriterPerf;
    };
