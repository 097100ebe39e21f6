import {
  conversationItem,
  partsText,
  systemText,
  type ConversationItem,
  type ConversationRole,
  type ConversationView,
} from './conversation-view.ts';
import type { ResponsesInputItem, ResponsesRequest } from './responses-request.ts';

function messageRole(role: string): ConversationRole {
  return role === 'system' || role === 'developer' || role === 'assistant' ? role : 'user';
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Items of other types, read by their fields: one with a call id and an `output` is a tool result (so is
 * `local_shell_call_output`, whose `id` is the call's), one with a call id alone a tool call named by `name` or its
 * type (`local_shell_call` → `local_shell`) with `arguments`, `input`, or its `action`/`operation` as JSON; anything
 * else (web search calls, item references, …) an empty assistant item.
 */
function otherItem(item: Readonly<Record<string, unknown>>): ConversationItem {
  const type = str(item['type']) ?? '';
  const callId = str(item['call_id']) ?? (type.endsWith('_output') ? str(item['id']) : undefined);
  if (callId !== undefined && 'output' in item) {
    return conversationItem('tool', { toolResults: [{ callId, output: partsText(item['output']), isError: false }] });
  }
  if (callId !== undefined) {
    const name = str(item['name']) ?? type.replace(/_call$/, '');
    const args = str(item['arguments']) ?? str(item['input']) ?? JSON.stringify(item['action'] ?? item['operation'] ?? {});
    return conversationItem('assistant', { toolCalls: [{ id: callId, name, arguments: args }] });
  }
  return conversationItem('assistant');
}

/** One input item (its shape was checked by the request schema, so the known fields are there). */
function responsesItem(item: ResponsesInputItem): ConversationItem {
  const fields = item as Readonly<Record<string, unknown>>;
  const type = str(fields['type']);
  const role = str(fields['role']);
  if (role !== undefined && (type === undefined || type === 'message')) {
    return conversationItem(messageRole(role), { text: partsText(fields['content']) });
  }
  const callId = str(fields['call_id']) ?? '';
  switch (type) {
    case 'function_call':
      return conversationItem('assistant', {
        toolCalls: [{ id: callId, name: str(fields['name']) ?? '', arguments: str(fields['arguments']) ?? '' }],
      });
    case 'function_call_output':
      return conversationItem('tool', { toolResults: [{ callId, output: partsText(fields['output']), isError: false }] });
    case 'reasoning':
      return conversationItem('assistant', {
        thinking: { text: partsText(fields['summary'] ?? []), signature: str(fields['encrypted_content']) },
      });
    case undefined:
    default:
      return otherItem(fields);
  }
}

/** The {@link ConversationView} of a Responses request (one item per input item; a string input is one user item). */
export function responsesConversation(body: ResponsesRequest): ConversationView {
  const input = body.input ?? [];
  const items = typeof input === 'string' ? [conversationItem('user', { text: input })] : input.map(responsesItem);
  const instructions = body.instructions ?? undefined;
  const tools = (body.tools ?? []).flatMap((tool) =>
    tool.type === 'function' && tool.name !== undefined
      ? [{ name: tool.name, description: tool.description ?? undefined, parameters: tool.parameters ?? undefined }]
      : [],
  );
  return { model: body.model, stream: body.stream === true, instructions, system: systemText(instructions, items), items, tools };
}
