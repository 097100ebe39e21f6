import type { SessionState, WriterSlot } from '@baton/protocol';

/** The state fields an actor's summary and a recorded decision share. */
export interface StateFields {
  readonly tokens: number;
  readonly usableWindow: number;
  readonly nextThreshold: number | null;
  readonly watermark: string | null;
  readonly writer: WriterSlot;
  readonly overflow: boolean;
  readonly calibration?: { readonly text: number; readonly tool: number; readonly image: number; readonly message?: number | undefined } | undefined;
  readonly lastPromptTokens?: number | undefined;
  readonly overWindow?: number | undefined;
}

/**
 * A session's state as protocol replies carry it, from its actor's summary or from the state a decision recorded
 * (the one mapping both `append` replies and `runtime.sessions` use).
 */
export function stateOf(s: StateFields): SessionState {
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
