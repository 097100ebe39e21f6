import { contentText, type ChatMessage, type ChatRequest } from './chat-request.ts';
import {
  conversationItem,
  systemText,
  type ConversationItem,
  type ConversationRole,
  type ConversationView,
} from './conversation-view.ts';

function roleOf(role: string): ConversationRole {
  switch (role) {
    case 'system':
    case 'developer':
    case 'user':
    case 'assistant':
    case 'tool':
      return role;
    case 'function':
      return 'tool';
    default:
      return 'user';
  }
}

function chatItem(message: ChatMessage): ConversationItem {
  const role = roleOf(message.role);
  const text = contentText(message.content);
  if (role === 'tool') {
    return conversationItem('tool', { toolResults: [{ callId: message.tool_call_id ?? '', output: text, isError: false }] });
  }
  const toolCalls = (message.tool_calls ?? []).flatMap((call) =>
    call.function === undefined ? [] : [{ id: call.id, name: call.function.name, arguments: call.function.arguments }],
  );
  const reasoning = message['reasoning_content'];
  const thinking = typeof reasoning === 'string' ? { text: reasoning, signature: undefined } : undefined;
  return conversationItem(role, { text, toolCalls, thinking });
}

/** The {@link ConversationView} of a chat-completions request (one item per message). */
export function chatConversation(body: ChatRequest): ConversationView {
  const items = body.messages.map(chatItem);
  const tools = (body.tools ?? []).flatMap((tool) =>
    tool.function === undefined ? [] : [{ name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters }],
  );
  return { model: body.model, stream: body.stream === true, instructions: undefined, system: systemText(undefined, items), items, tools };
}

type MutableMessage = { role: string; content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };

/**
 * A chat-completions rendering of `view` (for requests of the other APIs): the instructions as a leading system
 * message; tool results as `tool` messages (before the text of the Anthropic user message that carried them);
 * consecutive assistant items with tool calls merged into one assistant message; items with nothing but reasoning
 * left out. Function tools become chat tools.
 */
export function chatForm(view: ConversationView): ChatRequest {
  const messages: MutableMessage[] = [];
  if (view.instructions !== undefined && view.instructions !== '') messages.push({ role: 'system', content: view.instructions });
  for (const item of view.items) {
    for (const result of item.toolResults) messages.push({ role: 'tool', tool_call_id: result.callId, content: result.output });
    if (item.role === 'tool') continue;
    const calls = item.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    if (item.role !== 'assistant') {
      if (item.text !== '' || item.toolResults.length === 0) messages.push({ role: item.role, content: item.text });
      continue;
    }
    if (item.text === '' && calls.length === 0) continue;
    const previous = messages[messages.length - 1];
    if (previous?.role === 'assistant' && item.text === '') {
      previous.tool_calls = [...(previous.tool_calls ?? []), ...calls];
      continue;
    }
    messages.push({ role: 'assistant', content: item.text === '' ? null : item.text, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
  }
  const tools = view.tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters !== undefined ? { parameters: { ...tool.parameters } } : {}),
    },
  }));
  return { model: view.model, messages, tools, stream: view.stream };
}
