import { usageFromProvider } from '@baton/protocol';
import type { AgentReply, ReplyReader } from './agent-request.ts';
import { SseEvents, eventJson } from './sse-events.ts';

/** The finish of a Responses reply in chat's words: its calls, a cut-off, or a plain stop. */
function finishOf(response: Record<string, unknown>): string {
  const output = Array.isArray(response['output']) ? (response['output'] as Record<string, unknown>[]) : [];
  if (output.some((o) => typeof o['type'] === 'string' && (o['type']).endsWith('_call'))) return 'tool_calls';
  const reason = (response['incomplete_details'] as { reason?: unknown } | null | undefined)?.reason;
  if (response['status'] === 'incomplete') return reason === 'max_output_tokens' ? 'length' : typeof reason === 'string' ? reason : 'incomplete';
  return 'stop';
}

/** A complete Responses `response` object as the session records it; null when it did not complete. */
export function replyOfResponse(response: unknown): AgentReply | null {
  if (typeof response !== 'object' || response === null) return null;
  const r = response as Record<string, unknown>;
  if (r['status'] !== 'completed' && r['status'] !== 'incomplete') return null;
  const output = Array.isArray(r['output']) ? r['output'] : [];
  return { finishReason: finishOf(r), usage: usageFromProvider('openai-responses', r['usage']), items: Math.max(1, output.length) };
}

/** Reads a Responses reply: a streamed one ends with `response.completed` (or `response.incomplete`). */
export class ResponsesReplyReader implements ReplyReader {
  readonly #stream: boolean;
  readonly #chunks: Buffer[] = [];
  #final: AgentReply | null = null;
  readonly #events = new SseEvents((event) => {
    const data = eventJson(event);
    const type = data?.['type'] ?? event.event;
    if (type === 'response.completed' || type === 'response.incomplete') this.#final = replyOfResponse(data?.['response']);
  });

  constructor(stream: boolean) {
    this.#stream = stream;
  }

  feed(chunk: Buffer): void {
    if (this.#stream) this.#events.feed(chunk);
    else this.#chunks.push(chunk);
  }

  reply(): AgentReply | null {
    if (this.#stream) return this.#final;
    try {
      return replyOfResponse(JSON.parse(Buffer.concat(this.#chunks).toString('utf8')));
    } catch {
      return null;
    }
  }
}
