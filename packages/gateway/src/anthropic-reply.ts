import { usageFromProvider } from '@baton/protocol';
import type { AgentReply, ReplyReader } from './agent-request.ts';
import { SseEvents, eventJson } from './sse-events.ts';

const STOP_REASONS: Readonly<Record<string, string>> = { tool_use: 'tool_calls', end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', refusal: 'content_filter', pause_turn: 'stop' };

const finishOf = (stop: unknown): string | null => (typeof stop === 'string' ? (STOP_REASONS[stop] ?? stop) : null);

/** A complete Anthropic message as the session records it; null when it is not one. */
export function replyOfMessage(message: unknown): AgentReply | null {
  if (typeof message !== 'object' || message === null || (message as { type?: unknown }).type !== 'message') return null;
  const m = message as Record<string, unknown>;
  return { finishReason: finishOf(m['stop_reason']), usage: usageFromProvider('anthropic-messages', m['usage']), items: 1 };
}

/**
 * Reads an Anthropic reply: a streamed one carries its usage in `message_start` (input side) and `message_delta`
 * (output side, and any field it repeats takes over), its stop reason in `message_delta`, and ends with
 * `message_stop`.
 */
export class AnthropicReplyReader implements ReplyReader {
  readonly #stream: boolean;
  readonly #chunks: Buffer[] = [];
  #usage: Record<string, unknown> = {};
  #stop: unknown = null;
  #done = false;
  readonly #events = new SseEvents((event) => {
    const data = eventJson(event);
    const type = data?.['type'] ?? event.event;
    if (type === 'message_start') {
      const usage = (data?.['message'] as { usage?: unknown } | undefined)?.usage;
      if (typeof usage === 'object' && usage !== null) this.#usage = { ...(usage as Record<string, unknown>) };
    } else if (type === 'message_delta') {
      this.#stop = (data?.['delta'] as { stop_reason?: unknown } | undefined)?.stop_reason ?? this.#stop;
      const usage = data?.['usage'];
      if (typeof usage === 'object' && usage !== null) {
        for (const [k, v] of Object.entries(usage)) if (v !== null && v !== undefined) this.#usage[k] = v;
      }
    } else if (type === 'message_stop') {
      this.#done = true;
    }
  });

  constructor(stream: boolean) {
    this.#stream = stream;
  }

  feed(chunk: Buffer): void {
    if (this.#stream) this.#events.feed(chunk);
    else this.#chunks.push(chunk);
  }

  reply(): AgentReply | null {
    if (!this.#stream) {
      try {
        return replyOfMessage(JSON.parse(Buffer.concat(this.#chunks).toString('utf8')));
      } catch {
        return null;
      }
    }
    if (!this.#done) return null;
    return { finishReason: finishOf(this.#stop), usage: usageFromProvider('anthropic-messages', this.#usage), items: 1 };
  }
}
