import type { SessionState } from '@baton/protocol';
import type { SessionSummary } from '../host/worker-messages.ts';

/** A session's state as protocol replies carry it, from its actor's summary. */
export function stateOf(s: SessionSummary): SessionState {
  return {
    tokens: s.tokens,
    usable_window: s.usableWindow,
    next_threshold: s.nextThreshold,
    watermark: s.watermark,
    writer: s.writer,
    overflow: s.overflow,
    ...(s.calibration !== undefined ? { calibration: { ...s.calibration } } : {}),
    ...(s.lastPromptTokens !== undefined ? { last_prompt_tokens: s.lastPromptTokens } : {}),
    ...(s.overWindow !== undefined ? { over_window: s.overWindow } : {}),
  };
}
