/*
 * The API-neutral view of a model request. Items mirror the request's own list one to one (chat messages, Responses
 * input items, Anthropic messages), so an item's index is its index on the wire. Consequences a reader must know:
 * - a Responses turn that called two tools is two `assistant` items, one call each (consecutive assistant items are
 *   one turn);
 * - an Anthropic user message carrying `tool_result` blocks is one `user` item with `toolResults` (and any text the
 *   client put next to them); chat `tool` messages and Responses `function_call_output` items are `tool` items;
 * - system and developer messages of chat and Responses stay items; `instructions` (Responses) and `system`
 *   (Anthropic) are not items but {@link ConversationView.instructions}.
 */

/** Roles of {@link ConversationItem}. */
export type ConversationRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

/** A tool call the model made: `arguments` is the JSON text as sent (Anthropic `input` re-encoded). */
export interface ConversationToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** A tool's output sent back to the model, as text (text parts joined with newlines). */
export interface ConversationToolResult {
  readonly callId: string;
  readonly output: string;
  readonly isError: boolean;
}

/** Reasoning sent back with a turn: its visible text and opaque signature (Responses `encrypted_content`). */
export interface ConversationThinking {
  readonly text: string;
  readonly signature: string | undefined;
}

/** One message or item of the conversation. */
export interface ConversationItem {
  readonly role: ConversationRole;
  /** Text parts joined with newlines (`''` when there are none). Tool outputs are in `toolResults`, not here. */
  readonly text: string;
  readonly toolCalls: readonly ConversationToolCall[];
  readonly toolResults: readonly ConversationToolResult[];
  readonly thinking: ConversationThinking | undefined;
}

/** A function tool the request offers (other tool kinds are left out). */
export interface ConversationTool {
  readonly name: string;
  readonly description: string | undefined;
  readonly parameters: Readonly<Record<string, unknown>> | undefined;
}

/** A request's conversation, whatever its API. */
export interface ConversationView {
  readonly model: string;
  readonly stream: boolean;
  /** The system prompt given outside the list: Responses `instructions`, Anthropic `system`; chat: `undefined`. */
  readonly instructions: string | undefined;
  /** All system-level text: `instructions`, then the system and developer items' text, joined by blank lines. */
  readonly system: string;
  readonly items: readonly ConversationItem[];
  readonly tools: readonly ConversationTool[];
}

/** An item with the defaults filled in. */
export function conversationItem(role: ConversationRole, fields: Partial<Omit<ConversationItem, 'role'>> = {}): ConversationItem {
  return { role, text: fields.text ?? '', toolCalls: fields.toolCalls ?? [], toolResults: fields.toolResults ?? [], thinking: fields.thinking };
}

/** `system` of a {@link ConversationView}: the instructions, then the system and developer items' text. */
export function systemText(instructions: string | undefined, items: readonly ConversationItem[]): string {
  const parts = [instructions ?? '', ...items.filter((i) => i.role === 'system' || i.role === 'developer').map((i) => i.text)];
  return parts.filter((p) => p !== '').join('\n\n');
}

/** Text of content parts (`text` of every part that has one), joined with newlines; a string is its own text. */
export function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content as unknown[]) {
    const text = typeof part === 'object' && part !== null ? (part as Record<string, unknown>)['text'] : undefined;
    if (typeof text === 'string') texts.push(text);
  }
  return texts.join('\n');
}
