import type { SessionInputRecord } from '@baton/log-schema';
import type { PublishedEventBody } from '@baton/protocol';
import type { SessionSummary, WriterSettledNote } from '../host/worker-messages.ts';
import type { WaitOutcome } from './session-service-options.ts';

/** The `writer.cache_perf` event a settled writer's figures are published as. */
export function cachePerfEvent(note: WriterSettledNote): PublishedEventBody {
  const { perf } = note;
  return {
    type: 'writer.cache_perf',
    writer_id: note.writerId,
    status: note.outcome === 'success' ? 'completed' : 'failed',
    total_input_tokens: perf.promptTokens,
    cache_read_tokens: perf.cachedTokens,
    cache_write_tokens: Math.max(0, perf.promptTokens - perf.cachedTokens),
    cache_hit_rate: perf.promptTokens > 0 ? perf.cachedTokens / perf.promptTokens : 0,
    num_llm_calls: perf.calls,
  };
}

/** The `writer.settled` input a worker's settlement note enters its session as. */
export function writerSettledInput(note: WriterSettledNote): SessionInputRecord {
  return {
    type: 'writer.settled',
    payload: {
      writerId: note.writerId,
      outcome: note.outcome,
      ...(note.failure !== null ? { failure: note.failure } : {}),
      ...(note.reason !== null ? { reason: note.reason } : {}),
    },
  };
}

/** How writer `writerId` settled, as the session's summary records it; null while it has not. */
export function settlementOf(summary: SessionSummary, writerId: string): WaitOutcome | null {
  const last = summary.lastOutcome;
  if (last === null || last.writerId !== writerId) return null;
  return { outcome: last.outcome, ...(last.failure !== null ? { failure: last.failure } : {}) };
}
