/**
 * Reading OpenAI-style chat messages without a model: the text of a message's content, the tool results carried in
 * content parts, and the tool calls (OpenAI `tool_calls` or `tool_use` content parts) with their parsed arguments.
 */

/** A chat message as the extractive summary reads it (the protocol's `Message` fits). */
export interface ChatMessageLike {
  readonly role: 'user' | 'assistant' | 'tool' | 'system';
  readonly content: string | readonly object[] | null;
  readonly tool_calls?: readonly object[] | null | undefined;
  readonly tool_call_id?: string | null | undefined;
}

/** One tool call: its id (if any), tool name and arguments (parsed when they were a JSON string). */
export interface ToolCallLike {
  readonly id: string | undefined;
  readonly name: string;
  readonly args: unknown;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The text of a content value: a string as is; for an array, the `text` of every part that has one (text,
 * input_text, output_text…) joined with newlines — tool results and images are not text; null gives ''.
 */
export function contentText(content: ChatMessageLike['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const part of content) {
    const type = str(field(part, 'type'));
    const text = str(field(part, 'text'));
    if (text !== undefined && type !== 'tool_result') texts.push(text);
  }
  return texts.join('\n');
}

/** Tool results carried inside content parts (`{type: 'tool_result', tool_use_id, content}`), with their call id. */
export function contentToolResults(content: ChatMessageLike['content']): { callId: string | undefined; text: string }[] {
  if (content === null || typeof content === 'string') return [];
  const results: { callId: string | undefined; text: string }[] = [];
  for (const part of content) {
    if (str(field(part, 'type')) !== 'tool_result') continue;
    const inner = field(part, 'content');
    const text = typeof inner === 'string' ? inner : Array.isArray(inner) ? contentText(inner as object[]) : '';
    results.push({ callId: str(field(part, 'tool_use_id')), text });
  }
  return results;
}

/** The tool calls of a message: `tool_calls` entries (`{id, function: {name, arguments}}`) and `tool_use` parts. */
export function messageToolCalls(message: ChatMessageLike): ToolCallLike[] {
  const calls: ToolCallLike[] = [];
  for (const call of message.tool_calls ?? []) {
    const fn = field(call, 'function');
    const name = str(field(fn, 'name')) ?? str(field(call, 'name')) ?? '';
    calls.push({ id: str(field(call, 'id')), name, args: parseArgs(field(fn, 'arguments') ?? field(call, 'arguments')) });
  }
  if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (str(field(part, 'type')) !== 'tool_use') continue;
      const name = str(field(part, 'name')) ?? '';
      calls.push({ id: str(field(part, 'id')), name, args: parseArgs(field(part, 'input')) });
    }
  }
  return calls;
}

function parseArgs(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args) as unknown;
  } catch {
    // Arguments cut off by the provider or not JSON at all: keep the raw text (patch text still yields paths).
    return args;
  }
}
