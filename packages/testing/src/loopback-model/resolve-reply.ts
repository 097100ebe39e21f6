import type { ReplySpec } from './types.ts';

/** A tool call with its id assigned; `arguments` is JSON text, or a custom call's raw input. */
export interface ResolvedToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  readonly kind: 'function' | 'custom';
}

/** A reply with every default applied and tool-call ids assigned. */
export interface ResolvedReply {
  readonly content: string | null;
  readonly reasoning: string | undefined;
  readonly thinking: { readonly text: string; readonly signature: string } | undefined;
  readonly toolCalls: readonly ResolvedToolCall[];
  readonly finishReason: string;
}

/** A call's arguments as a function call carries them: a custom call's input becomes `{"input": …}`. */
export function functionArguments(call: ResolvedToolCall): string {
  return call.kind === 'custom' ? JSON.stringify({ input: call.arguments }) : call.arguments;
}

/**
 * Applies the {@link ReplySpec} defaults; missing tool-call ids become `<idPrefix>_<requestIndex>_<n>` (`call_…` for
 * the OpenAI APIs, `toolu_…` for Anthropic).
 */
export function resolveReply(spec: ReplySpec, requestIndex: number, idPrefix = 'call'): ResolvedReply {
  const toolCalls = (spec.tool_calls ?? []).map((call, n) => ({
    id: call.id ?? `${idPrefix}_${requestIndex}_${n}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    kind: call.kind ?? 'function',
  }));
  const hasCalls = toolCalls.length > 0;
  return {
    content: spec.content !== undefined ? spec.content : hasCalls ? null : '',
    reasoning: spec.reasoning,
    thinking: spec.thinking,
    toolCalls,
    finishReason: spec.finish_reason ?? (hasCalls ? 'tool_calls' : 'stop'),
  };
}

/**
 * The pieces of a reply whose tokens count as completion tokens: content and tool calls in `texts`, and the
 * reasoning text (chat: `reasoning`; the other APIs: `thinking.text`).
 */
export function completionTexts(reply: ResolvedReply, reasoningFrom: 'reasoning' | 'thinking' = 'reasoning'): { texts: string[]; reasoning: string } {
  const texts: string[] = [];
  if (reply.content !== null) texts.push(reply.content);
  for (const call of reply.toolCalls) texts.push(call.name, call.arguments);
  const reasoning = reasoningFrom === 'reasoning' ? reply.reasoning : reply.thinking?.text;
  return { texts, reasoning: reasoning ?? '' };
}
