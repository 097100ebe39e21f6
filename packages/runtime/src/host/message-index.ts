import type { IndexedMessage } from '@baton/actors';
import { countTokensOnce } from '@baton/memory-store';
import type { Message } from '@baton/protocol';

/**
 * Turns appended protocol messages into the session actor's index entries. Deterministic (real o200k token counts),
 * so live folding and replay compute the same entries from the same log record.
 */
export function indexMessages(messages: readonly Message[]): IndexedMessage[] {
  return messages.map((m) => {
    const toolCallIds =
      m.role === 'tool'
        ? typeof m.tool_call_id === 'string'
          ? [m.tool_call_id]
          : []
        : (m.tool_calls ?? []).flatMap((c) => (typeof (c as { id?: unknown }).id === 'string' ? [(c as { id: string }).id] : []));
    const textual = typeof m.content === 'string' ? m.content.trim() !== '' : Array.isArray(m.content) && m.content.some((p) => (p as { type?: unknown }).type === 'text');
    const body = (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')) + (m.tool_calls ? JSON.stringify(m.tool_calls) : '');
    const usage = m.usage;
    const usageTotal = m.role === 'assistant' && m.finish_reason != null && usage !== undefined ? (usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens) : null;
    return {
      id: m.id,
      role: m.role,
      tokens: countTokensOnce(body),
      textual: m.role !== 'tool' && textual,
      finished: m.role === 'assistant' && m.finish_reason != null,
      toolCallIds,
      main: m.agent_id === undefined || m.agent_id === 'main',
      usageTotal,
    };
  });
}
