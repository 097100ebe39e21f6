import type { ProviderApi } from '../enums.ts';
import { toProviderMessage, type Message } from '../messages.ts';
import { field, str } from './native-parts.ts';

/** A user turn of plain text as the provider API carries it (no Baton envelope). */
export function userTextItem(api: ProviderApi, text: string): Record<string, unknown> {
  switch (api) {
    case 'openai-chat':
      return { role: 'user', content: text };
    case 'openai-responses':
      return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
    case 'anthropic-messages':
      return { role: 'user', content: [{ type: 'text', text }] };
  }
}

/** A user message of plain text in the session's API, under Baton's id (a rebuild's boundary message). */
export function userTextMessage(api: ProviderApi, id: string, text: string): Message {
  return api === 'openai-chat' ? { id, role: 'user', content: text } : { id, role: 'user', content: null, native: userTextItem(api, text) };
}

/** `m` with another native form (envelope kept). */
const withNative = (m: Message, native: Record<string, unknown>): Message => ({ ...m, native });

/** `m` with the output of every tool result it carries replaced by `text` (a rebuild clearing old outputs). */
export function withToolOutputs(m: Message, text: string): Message {
  const native = m.native;
  if (native === undefined) return { ...m, content: text };
  if (typeof native['type'] === 'string' && native['type'] !== 'message') return withNative(m, { ...native, output: text });
  const content = native['content'];
  if (!Array.isArray(content)) return m;
  return withNative(m, { ...native, content: content.map((b: unknown) => (field(b, 'type') === 'tool_result' ? { ...(b as object), content: text } : b)) });
}

/**
 * `m` keeping only the tool calls whose id is in `keep`; null when nothing would be left (no text, no call). A
 * Responses call item is kept or dropped whole.
 */
export function keepingToolCalls(m: Message, keep: ReadonlySet<string>): Message | null {
  const native = m.native;
  if (native === undefined) {
    if (!Array.isArray(m.tool_calls)) return m;
    const kept = m.tool_calls.filter((c) => keep.has(String(field(c, 'id'))));
    if (kept.length === m.tool_calls.length) return m;
    if (kept.length === 0 && (m.content === null || m.content === '')) return null;
    const copy: Message = { ...m };
    if (kept.length === 0) delete (copy as { tool_calls?: unknown }).tool_calls;
    else copy.tool_calls = kept;
    return copy;
  }
  const type = str(native['type']);
  if (type === 'function_call' || type === 'custom_tool_call' || type === 'local_shell_call') return keep.has(str(native['call_id']) ?? '') ? m : null;
  return keepingBlocks(m, native, 'tool_use', 'id', keep);
}

/** `m` keeping only the tool results that answer a call in `keep`; null when nothing would be left. */
export function keepingToolResults(m: Message, keep: ReadonlySet<string>): Message | null {
  const native = m.native;
  if (native === undefined) return m.role !== 'tool' || (typeof m.tool_call_id === 'string' && keep.has(m.tool_call_id)) ? m : null;
  const type = str(native['type']);
  if (type === 'function_call_output' || type === 'custom_tool_call_output' || type === 'local_shell_call_output') return keep.has(str(native['call_id']) ?? '') ? m : null;
  return keepingBlocks(m, native, 'tool_result', 'tool_use_id', keep);
}

/** An Anthropic message keeping only the `blockType` blocks whose `idField` is in `keep` (null when none is left). */
function keepingBlocks(m: Message, native: Record<string, unknown>, blockType: string, idField: string, keep: ReadonlySet<string>): Message | null {
  const content = native['content'];
  if (!Array.isArray(content)) return m;
  const kept = content.filter((b: unknown) => field(b, 'type') !== blockType || keep.has(String(field(b, idField))));
  if (kept.length === content.length) return m;
  return kept.length === 0 ? null : withNative(m, { ...native, content: kept });
}

/** Content blocks of an Anthropic message (a string becomes one text block). */
function blocksOf(native: Record<string, unknown>): unknown[] {
  const content = native['content'];
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
}

/**
 * A message list as the provider gets it, in the session's API. For Anthropic, a message Baton inserted (its id starts
 * with `baton-`) and a neighbour of the same role become one turn, so roles keep alternating where the agent's did;
 * the agent's own messages are never merged with each other.
 */
export function providerMessages(messages: readonly Message[], api: ProviderApi): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let previous: Message | null = null;
  for (const m of messages) {
    const item = toProviderMessage(m);
    const last = out.at(-1);
    const mergeable = api === 'anthropic-messages' && last !== undefined && previous !== null && last['role'] === item['role'];
    if (mergeable && (previous?.id.startsWith('baton-') === true || m.id.startsWith('baton-'))) {
      out[out.length - 1] = { ...last, content: [...blocksOf(last), ...blocksOf(item)] };
    } else {
      out.push(item);
    }
    previous = m;
  }
  return out;
}
