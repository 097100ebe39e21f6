import type { WriterOutcome } from '@baton/protocol';
import type { Failure } from './session-events.ts';
import type { WriterPerf } from './writer-effects.ts';
import type { WriterInput } from './writer-events.ts';

/** The writer machine's states; `phase` in the context names the one the machine is in. */
export type WriterPhase = 'preparing' | 'calling' | 'tools' | 'validating' | 'committing' | 'settled';

export interface WriterContext {
  readonly input: WriterInput;
  /** The state the machine is in, kept in the context for the runtime's `status` (set on entry to each state). */
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
