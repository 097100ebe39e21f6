import { viewOf, type Message, type ProviderApi } from '@baton/protocol';
import type { AgentItem } from './agent-request.ts';

/** The wording of a compaction prompt sent as the last user message. */
export const SUMMARY_ASK = /summar|compact/i;

/** Every text an item carries (its content's text parts, whatever the API), joined. */
export function textOfItem(item: AgentItem): string {
  const content = item['content'];
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: unknown) => {
    const text = typeof part === 'object' && part !== null ? (part as { text?: unknown }).text : undefined;
    return typeof text === 'string' ? [text] : [];
  }).join('\n');
}

/** Baton's reading of an item's role (chat messages carry their own). */
export function toRole(item: AgentItem, api: ProviderApi): Message['role'] {
  if (api === 'openai-chat') {
    const role = item['role'];
    return role === 'assistant' || role === 'tool' || role === 'system' ? role : role === 'developer' ? 'system' : 'user';
  }
  return viewOf({ id: '', role: 'user', content: null, native: item }).role;
}
