import { viewOf, type Message } from '@baton/protocol';

/** The text of a message: a chat message's text parts, or its native form's text. */
export function textOf(m: Message): string {
  if (m.native !== undefined) return viewOf(m).text;
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  return m.content.flatMap((p) => (typeof (p as { text?: unknown }).text === 'string' ? [(p as { text: string }).text] : [])).join('\n');
}
