/**
 * One chat-completions call over `fetch`, timed from the client's side, and the assistant reply read back from its
 * JSON or SSE body. Used by the `gateway` section's agents for calls through the gateway and straight to the upstream
 * alike, so both pay the same client costs.
 */
import { performance } from 'node:perf_hooks';

export interface TimedCall {
  /** Send → first body bytes received, ms. */
  readonly ttfb: number;
  /** Send → body complete, ms. */
  readonly total: number;
  readonly status: number;
  readonly text: string;
}

/** The assistant message of a completion, as an agent echoes it back in its history. */
export interface ChatReply {
  readonly content: string | null;
  readonly toolCalls: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  /** `usage.total_tokens`, or null when the reply had none. */
  readonly usage: number | null;
}

/** POSTs `body` to `url` and reads the whole answer; throws on a non-2xx status. */
export async function timedChatCall(url: string, body: string, headers: Readonly<Record<string, string>>): Promise<TimedCall> {
  const start = performance.now();
  const res = await fetch(url, { method: 'POST', headers, body });
  const chunks: Uint8Array[] = [];
  let ttfb: number | undefined;
  if (res.body !== null) {
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      ttfb ??= performance.now() - start;
      chunks.push(next.value);
    }
  }
  const total = performance.now() - start;
  const text = Buffer.concat(chunks).toString('utf8');
  if (res.status < 200 || res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { ttfb: ttfb ?? total, total, status: res.status, text };
}

interface WireToolCall {
  readonly index?: number;
  readonly id?: string;
  readonly function?: { readonly name?: string; readonly arguments?: string };
}

interface WireChoice {
  readonly message?: { readonly content?: string | null; readonly tool_calls?: readonly WireToolCall[] };
  readonly delta?: { readonly content?: string | null; readonly tool_calls?: readonly WireToolCall[] };
}

interface WireCompletion {
  readonly choices?: readonly WireChoice[];
  readonly usage?: { readonly total_tokens?: number } | null;
}

/** The reply of a non-streamed (`stream: false`) or streamed (SSE) completion body. */
export function parseChatReply(text: string, stream: boolean): ChatReply {
  if (!stream) {
    const body = JSON.parse(text) as WireCompletion;
    const message = body.choices?.[0]?.message;
    return {
      content: message?.content ?? null,
      toolCalls: (message?.tool_calls ?? []).map((c) => ({ id: c.id ?? '', name: c.function?.name ?? '', arguments: c.function?.arguments ?? '' })),
      usage: body.usage?.total_tokens ?? null,
    };
  }
  let content: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  let usage: number | null = null;
  for (const event of text.split('\n\n')) {
    const data = event.startsWith('data: ') ? event.slice('data: '.length) : '';
    if (data === '' || data === '[DONE]') continue;
    const chunk = JSON.parse(data) as WireCompletion;
    if (chunk.usage?.total_tokens !== undefined) usage = chunk.usage.total_tokens;
    const delta = chunk.choices?.[0]?.delta;
    if (typeof delta?.content === 'string') content = (content ?? '') + delta.content;
    for (const call of delta?.tool_calls ?? []) {
      const at = call.index ?? 0;
      const slot = (calls[at] ??= { id: '', name: '', arguments: '' });
      if (call.id !== undefined) slot.id = call.id;
      if (call.function?.name !== undefined) slot.name += call.function.name;
      if (call.function?.arguments !== undefined) slot.arguments += call.function.arguments;
    }
  }
  return { content, toolCalls: calls, usage };
}
