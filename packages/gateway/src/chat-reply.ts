import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Provider usage of one completion, as the agent's provider reported it. */
export interface ChatUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens?: number;
  readonly cached_tokens?: number;
}

/** The assistant reply of one completion: what the session records once the agent sends it back. */
export interface ChatReply {
  readonly content: string | null;
  readonly toolCallIds: readonly string[];
  readonly finishReason: string | null;
  readonly usage: ChatUsage | null;
}

interface Choice {
  readonly message?: { content?: unknown; tool_calls?: readonly { id?: unknown }[] };
  readonly delta?: { content?: unknown; tool_calls?: readonly { index?: unknown; id?: unknown }[] };
  readonly finish_reason?: unknown;
}

interface Completion {
  readonly choices?: readonly Choice[];
  readonly usage?: {
    readonly prompt_tokens?: unknown;
    readonly completion_tokens?: unknown;
    readonly total_tokens?: unknown;
    readonly prompt_tokens_details?: { readonly cached_tokens?: unknown } | null;
  } | null;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.trunc(v) : undefined);

function usageOf(u: Completion['usage']): ChatUsage | null {
  const prompt = num(u?.prompt_tokens);
  const completion = num(u?.completion_tokens);
  if (prompt === undefined || completion === undefined) return null;
  const total = num(u?.total_tokens);
  const cached = num(u?.prompt_tokens_details?.cached_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, ...(total !== undefined ? { total_tokens: total } : {}), ...(cached !== undefined ? { cached_tokens: cached } : {}) };
}

/** The reply of a non-streamed completion body, or null when it is not one. */
export function replyOfCompletion(body: unknown): ChatReply | null {
  const completion = body as Completion | null;
  const choice = completion?.choices?.[0];
  if (choice?.message === undefined) return null;
  const content = choice.message.content;
  return {
    content: typeof content === 'string' ? content : null,
    toolCallIds: (choice.message.tool_calls ?? []).flatMap((c) => (typeof c.id === 'string' ? [c.id] : [])),
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
    usage: usageOf(completion?.usage),
  };
}

/**
 * Reassembles a streamed completion from its SSE bytes as they pass through: content deltas, tool-call ids by
 * index, the finish reason, and the usage chunk. `isUsageOnly` tells the relay which events are the final
 * usage-only chunk (dropped when the agent did not ask for it).
 */
export class StreamedReply {
  #content = '';
  #hasContent = false;
  readonly #toolCallIds = new Map<number, string>();
  #finishReason: string | null = null;
  #usage: ChatUsage | null = null;
  #done = false;
  readonly #parser = createParser({ onEvent: (event) => this.#onEvent(event) });

  /** Feeds raw bytes of the SSE stream (chunk boundaries anywhere). */
  feed(text: string): void {
    this.#parser.feed(text);
  }

  /** Whether the stream ended with `data: [DONE]` or a finish reason was seen (a complete reply). */
  get complete(): boolean {
    return this.#done || this.#finishReason !== null;
  }

  reply(): ChatReply {
    return {
      content: this.#hasContent ? this.#content : null,
      toolCallIds: [...this.#toolCallIds.entries()].sort((a, b) => a[0] - b[0]).map(([, id]) => id),
      finishReason: this.#finishReason,
      usage: this.#usage,
    };
  }

  #onEvent(event: EventSourceMessage): void {
    if (event.data === '[DONE]') {
      this.#done = true;
      return;
    }
    let chunk: Completion;
    try {
      chunk = JSON.parse(event.data) as Completion;
    } catch {
      return;
    }
    const usage = usageOf(chunk.usage);
    if (usage !== null) this.#usage = usage;
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (typeof delta?.content === 'string') {
        this.#content += delta.content;
        this.#hasContent = true;
      }
      for (const call of delta?.tool_calls ?? []) {
        const index = typeof call.index === 'number' ? call.index : this.#toolCallIds.size;
        if (typeof call.id === 'string' && !this.#toolCallIds.has(index)) this.#toolCallIds.set(index, call.id);
      }
      if (typeof choice.finish_reason === 'string') this.#finishReason = choice.finish_reason;
    }
  }
}

/** Whether one SSE event's data is the usage-only chunk a stream ends with (`choices: []` and a usage object). */
export function isUsageOnlyChunk(data: string): boolean {
  if (!data.includes('"usage"')) return false;
  try {
    const chunk = JSON.parse(data) as Completion;
    return Array.isArray(chunk.choices) && chunk.choices.length === 0 && chunk.usage !== null && chunk.usage !== undefined;
  } catch {
    return false;
  }
}

/**
 * End (exclusive) of the first complete SSE event of `bytes` at or after `from` (the blank line that ends it, LF or
 * CRLF), or -1 when the event is not complete yet. Works on bytes so an event is relayed exactly as it arrived.
 */
export function sseEventEnd(bytes: Buffer, from: number): number {
  const lf = bytes.indexOf('\n\n', from);
  const crlf = bytes.indexOf('\r\n\r\n', from);
  if (lf < 0) return crlf < 0 ? -1 : crlf + 4;
  return crlf < 0 || lf < crlf ? lf + 2 : crlf + 4;
}

/** Whether one complete SSE event (its bytes) is the usage-only chunk: its `data` lines hold one. */
export function isUsageOnlyEvent(event: Buffer): boolean {
  const data = event
    .toString('utf8')
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5))
    .join('\n')
    .trim();
  return isUsageOnlyChunk(data);
}
