/**
 * Boundary selection over the session's per-message index. The boundary is the newest message a
 * writer covers; everything after it is the preserved tail of a rebuild.
 */

/** What the session keeps per main-slice message: never the body, only what decisions need. */
export interface MessageIndexEntry {
  readonly id: string;
  readonly role: 'user' | 'assistant' | 'tool' | 'system';
  /** Real-token count of the message (content + tool calls), computed by the host before the event is folded. */
  readonly tokens: number;
  /** Has text content (counts towards the "≥ N text messages" tail floor). */
  readonly textual: boolean;
  /** Assistant message with a finish reason. */
  readonly finished: boolean;
  /** Ids of tool calls issued (assistant) or answered (tool). */
  readonly toolCallIds: readonly string[];
  /** Images the message carries, not counted in `tokens` (absent: none). */
  readonly images?: number | undefined;
}

export interface TailPolicy {
  readonly minTokens: number;
  readonly maxTokens: number;
  readonly minTextMessages: number;
}

export const DEFAULT_TAIL_POLICY: TailPolicy = { minTokens: 10_000, maxTokens: 20_000, minTextMessages: 5 };

/**
 * Shares of the usable window the tail's token bounds may take at most: a small window keeps a tail in proportion
 * (a 20 000-token tail would be most of a 32 000-token model's window), and from a usable window of about 48 000
 * tokens up the default bounds are the smaller ones.
 */
export const TAIL_MIN_SHARE = 0.21;
export const TAIL_MAX_SHARE = 0.42;

/** `policy` with its token bounds at most their share of `usable` (a usable window of 0 leaves it as it is). */
export function scaledTailPolicy(policy: TailPolicy, usable: number): TailPolicy {
  if (usable <= 0) return { ...policy };
  return {
    minTokens: Math.min(policy.minTokens, Math.floor(usable * TAIL_MIN_SHARE)),
    maxTokens: Math.min(policy.maxTokens, Math.floor(usable * TAIL_MAX_SHARE)),
    minTextMessages: policy.minTextMessages,
  };
}

/**
 * Index of the boundary message, or -1 for an empty slice. Walks back from the message before the last finished
 * assistant until the tail holds `minTokens` and `minTextMessages` text messages, never past `maxTokens`; then moves
 * further back so that the preserved tail never starts with (or contains) a tool result whose call is covered.
 */
export function computeBoundaryIndex(msgs: readonly MessageIndexEntry[], policy: TailPolicy = DEFAULT_TAIL_POLICY): number {
  if (msgs.length === 0) return -1;
  let last = -1;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m !== undefined && m.role === 'assistant' && m.finished) {
      last = i;
      break;
    }
  }
  if (last <= 0) return adjustForToolPairs(msgs, Math.max(last, 0));
  let start = last - 1;
  let tail = 0;
  let texts = 0;
  for (let i = start; i < msgs.length; i++) {
    const m = msgs[i];
    if (m === undefined) continue;
    tail += m.tokens;
    if (m.textual) texts++;
  }
  if (tail < policy.maxTokens) {
    while (start > 0 && tail < policy.maxTokens && (tail < policy.minTokens || texts < policy.minTextMessages)) {
      start--;
      const m = msgs[start];
      if (m === undefined) break;
      tail += m.tokens;
      if (m.textual) texts++;
    }
  }
  return adjustForToolPairs(msgs, start);
}

/**
 * Moves the boundary back while a tool result in the preserved tail (after `boundary`) answers a call issued at or
 * before the boundary: the call and its result must stay on the same side.
 */
export function adjustForToolPairs(msgs: readonly MessageIndexEntry[], boundary: number): number {
  let b = boundary;
  for (;;) {
    const issuedAtOrBefore = new Map<string, number>();
    for (let i = 0; i <= b; i++) {
      const m = msgs[i];
      if (m?.role === 'assistant') for (const id of m.toolCallIds) issuedAtOrBefore.set(id, i);
    }
    let moveTo = b;
    for (let i = b + 1; i < msgs.length; i++) {
      const m = msgs[i];
      if (m?.role !== 'tool') continue;
      for (const id of m.toolCallIds) {
        const at = issuedAtOrBefore.get(id);
        if (at !== undefined) moveTo = Math.min(moveTo, at - 1);
      }
    }
    if (moveTo === b) return b;
    if (moveTo < 0) return -1;
    b = moveTo;
  }
}

/**
 * Start of a delta-mode slice: the message after the watermark, aligned back to the nearest user message at or before
 * it. Returns `msgs.length` when nothing follows the watermark.
 */
export function deltaStartIndex(msgs: readonly MessageIndexEntry[], watermark: string | null): number {
  const wIdx = watermark === null ? -1 : msgs.findIndex((m) => m.id === watermark);
  const raw = wIdx >= 0 ? wIdx + 1 : 0;
  if (raw >= msgs.length) return raw;
  for (let i = raw; i >= 0; i--) if (msgs[i]?.role === 'user') return i;
  return 0;
}
