import type { Message } from '../messages.ts';
import { argumentsText, field, partsText, str } from './native-parts.ts';

/** A tool call as Baton reads it, whatever the API: its id, tool name and arguments (JSON text, or a custom tool's input). */
export interface ToolCallView {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** A tool result as Baton reads it: the call it answers and its output as text. */
export interface ToolResultView {
  readonly callId: string;
  readonly text: string;
}

/**
 * What Baton reads from a message, whatever API shape it has: its role in the conversation (`tool` for a message that
 * carries tool results — an OpenAI tool message, a Responses `function_call_output`, an Anthropic user turn of
 * `tool_result` blocks), its text, the tool calls it issues and the results it carries.
 */
export interface MessageView {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly text: string;
  readonly toolCalls: readonly ToolCallView[];
  readonly toolResults: readonly ToolResultView[];
  /** A Responses `reasoning` item: it belongs with the item right after it and never ends a request on its own. */
  readonly reasoning: boolean;
  /** An item Baton does not read (a hosted tool's call, an item reference): counted, kept and sent as it is. */
  readonly opaque: boolean;
}

const roleOf = (role: unknown): MessageView['role'] => (role === 'system' || role === 'developer' ? 'system' : role === 'assistant' ? 'assistant' : role === 'tool' ? 'tool' : 'user');

function view(role: MessageView['role'], text: string, rest: Partial<Omit<MessageView, 'role' | 'text'>> = {}): MessageView {
  return { role, text, toolCalls: rest.toolCalls ?? [], toolResults: rest.toolResults ?? [], reasoning: rest.reasoning ?? false, opaque: rest.opaque ?? false };
}

/** An OpenAI chat message (the protocol's own fields). */
function chatView(m: Message): MessageView {
  const toolCalls = (m.tool_calls ?? []).flatMap((c): ToolCallView[] => {
    const id = str(field(c, 'id'));
    const fn = field(c, 'function') ?? field(c, 'custom');
    if (id === undefined) return [];
    return [{ id, name: str(field(fn, 'name')) ?? '', arguments: argumentsText(field(fn, 'arguments') ?? field(fn, 'input')) }];
  });
  const text = partsText(m.content);
  if (m.role === 'tool') return view('tool', text, { toolResults: typeof m.tool_call_id === 'string' ? [{ callId: m.tool_call_id, text }] : [] });
  return view(m.role, text, { toolCalls });
}

/** Output of a Responses tool-output item: a string, or content parts. */
const outputText = (output: unknown): string => (typeof output === 'string' ? output : partsText(output));

/** A Responses input item (an easy message `{role, content}` falls through to the role-and-content reading). */
function responsesItemView(item: Record<string, unknown>, type: string): MessageView {
  const callId = str(item['call_id']) ?? '';
  switch (type) {
    case 'function_call':
      return view('assistant', '', { toolCalls: [{ id: callId, name: str(item['name']) ?? '', arguments: argumentsText(item['arguments']) }] });
    case 'custom_tool_call':
      return view('assistant', '', { toolCalls: [{ id: callId, name: str(item['name']) ?? '', arguments: argumentsText(item['input']) }] });
    case 'local_shell_call':
      return view('assistant', '', { toolCalls: [{ id: callId, name: 'local_shell', arguments: argumentsText(item['action']) }] });
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'local_shell_call_output':
      return view('tool', outputText(item['output']), { toolResults: [{ callId, text: outputText(item['output']) }] });
    case 'reasoning':
      return view('assistant', partsText(item['summary']), { reasoning: true });
    default:
      return view('assistant', '', { opaque: true });
  }
}

/**
 * A message in the role-and-content shape of the Responses API or of Anthropic: text parts are its text; Anthropic
 * `tool_use` blocks are its calls, `tool_result` blocks its results (such a user turn reads as role `tool`).
 */
function contentMessageView(native: Record<string, unknown>): MessageView {
  const content = native['content'];
  const toolCalls: ToolCallView[] = [];
  const toolResults: ToolResultView[] = [];
  if (Array.isArray(content)) {
    for (const block of content) {
      const type = str(field(block, 'type'));
      if (type === 'tool_use') toolCalls.push({ id: str(field(block, 'id')) ?? '', name: str(field(block, 'name')) ?? '', arguments: argumentsText(field(block, 'input')) });
      else if (type === 'tool_result') toolResults.push({ callId: str(field(block, 'tool_use_id')) ?? '', text: outputText(field(block, 'content')) });
    }
  }
  const role = roleOf(native['role']);
  return view(toolResults.length > 0 ? 'tool' : role, partsText(content), { toolCalls, toolResults });
}

/** What Baton reads from `m`: from its native form when it has one, else from its OpenAI chat fields. */
export function viewOf(m: Message): MessageView {
  const native = m.native;
  if (native === undefined) return chatView(m);
  const type = str(native['type']);
  if (type !== undefined && type !== 'message') return responsesItemView(native, type);
  return contentMessageView(native);
}
