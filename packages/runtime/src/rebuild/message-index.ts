import type { IndexedMessage } from '@baton/actors';
import { countTokensOnce } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';

/** Part types that are images, in the three APIs' spellings. */
const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);

const isImagePart = (part: unknown): boolean => typeof part === 'object' && part !== null && IMAGE_PARTS.has((part as { type?: unknown }).type as string);

/**
 * Images anywhere in a message's content: content parts, and the content of the tool results it carries (Anthropic
 * `tool_result` blocks, Responses tool outputs). A provider counts an image by its size, not by the bytes of its
 * data, so images are counted apart from the text (as `images`), never as text.
 */
export function imageCount(value: unknown, depth = 0): number {
  if (depth > 4 || typeof value !== 'object' || value === null) return 0;
  if (Array.isArray(value)) return value.reduce<number>((n, part) => n + (isImagePart(part) ? 1 : imageCount(part, depth + 1)), 0);
  const record = value as Record<string, unknown>;
  return imageCount(record['content'], depth + 1) + imageCount(record['output'], depth + 1);
}

/** A chat content array as counted: its parts as JSON, images left out (they are counted as images). */
function chatContentText(content: Message['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || !content.some(isImagePart)) return JSON.stringify(content ?? '');
  return JSON.stringify(content.filter((part) => !isImagePart(part)));
}

/**
 * What of a message the model reads, as text to count: its text, its tool calls, its tool results, and an opaque item
 * whole. A Responses output item's text is its output already; the `tool_result` blocks of an Anthropic turn are not
 * among its text parts, so their outputs are counted besides.
 */
function countedText(m: Message, view: ReturnType<typeof viewOf>): string {
  if (m.native === undefined) return chatContentText(m.content) + (m.tool_calls ? JSON.stringify(m.tool_calls) : '');
  if (view.opaque) return JSON.stringify(m.native);
  const type = m.native['type'];
  const results = type === undefined || type === 'message' ? view.toolResults.map((r) => r.text).join('') : '';
  return view.text + view.toolCalls.map((c) => `${c.name}${c.arguments}`).join('') + results;
}

/** Whether a message has text content (chat: a non-blank string or any `text` part, as sessions have always counted it). */
function isTextual(m: Message, view: ReturnType<typeof viewOf>): boolean {
  if (view.role === 'tool') return false;
  if (m.native !== undefined) return view.text.trim() !== '';
  return typeof m.content === 'string' ? m.content.trim() !== '' : Array.isArray(m.content) && m.content.some((p) => (p as { type?: unknown }).type === 'text');
}

/**
 * Turns appended protocol messages into the session actor's index entries, reading each through its API's view (so a
 * Responses call item or an Anthropic turn of tool results pairs like an OpenAI tool call and its tool message).
 * Deterministic (real o200k token counts), so live folding and replay compute the same entries from the same record.
 */
export function indexMessages(messages: readonly Message[]): IndexedMessage[] {
  return messages.map((m) => {
    const view = viewOf(m);
    const toolCallIds = view.role === 'tool' ? view.toolResults.map((r) => r.callId) : view.toolCalls.map((c) => c.id);
    const usage = m.usage;
    const reported = view.role === 'assistant' && m.finish_reason != null && usage !== undefined;
    const usageTotal = reported ? (usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens) : null;
    const images = imageCount(m.native ?? m);
    return {
      id: m.id,
      role: view.role,
      tokens: countTokensOnce(countedText(m, view)),
      textual: isTextual(m, view),
      finished: view.role === 'assistant' && m.finish_reason != null,
      toolCallIds,
      main: m.agent_id === undefined || m.agent_id === 'main',
      usageTotal,
      ...(reported ? { usagePrompt: usage.prompt_tokens } : {}),
      ...(images > 0 ? { images } : {}),
    };
  });
}
