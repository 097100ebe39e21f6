import type { ErrorSpec, RecordedRequest } from './types.ts';

/**
 * A provider whose tokenizer counts otherwise than o200k (Anthropic, Gemini, a local model) or that sees images in
 * tool results: the loopback can count the tokens of tool outputs and of everything else heavier (or lighter) than
 * o200k does, and refuse a prompt above the model's window as a provider would. Usage reported (prompt and cached
 * tokens alike) and the window check use the scaled count.
 */
export interface UsageScale {
  /** Factor on the tokens of tool outputs (default 1). */
  readonly tool?: number;
  /** Factor on every other prompt token (default 1). */
  readonly text?: number;
}

/** o200k tokens of the tool outputs a request carries. */
export function toolOutputTokens(request: RecordedRequest, count: (text: string) => number): number {
  let tokens = 0;
  for (const item of request.conversation.items) for (const r of item.toolResults) tokens += count(r.output);
  return tokens;
}

/** `total` prompt tokens, of which `tool` are tool outputs, as the scaled provider counts them. */
export function scaledTokens(total: number, tool: number, scale: UsageScale | undefined): number {
  if (scale === undefined) return total;
  const toolPart = Math.min(tool, total);
  return Math.round(toolPart * (scale.tool ?? 1) + (total - toolPart) * (scale.text ?? 1));
}

/** `part` of a count scaled like the whole (a cached or cache-creation share keeps its proportion). */
export function scaledShare(part: number, total: number, scaledTotal: number): number {
  return total === 0 ? 0 : Math.min(scaledTotal, Math.round((part * scaledTotal) / total));
}

/** The error a provider answers a prompt above the window with, in OpenAI's wording (Anthropic's for Messages). */
export function tooLongError(api: RecordedRequest['api'], tokens: number, window: number): ErrorSpec {
  if (api === 'anthropic-messages') return { status: 400, type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` };
  return {
    status: 400,
    code: 'context_length_exceeded',
    message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
  };
}
