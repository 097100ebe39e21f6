import type { AnthropicMessage, AnthropicPrompt } from './anthropic-request.ts';
import {
  conversationItem,
  partsText,
  systemText,
  type ConversationItem,
  type ConversationThinking,
  type ConversationToolCall,
  type ConversationToolResult,
  type ConversationView,
} from './conversation-view.ts';

function anthropicItem(message: AnthropicMessage): ConversationItem {
  if (typeof message.content === 'string') return conversationItem(message.role, { text: message.content });
  const texts: string[] = [];
  const toolCalls: ConversationToolCall[] = [];
  const toolResults: ConversationToolResult[] = [];
  let thinking: ConversationThinking | undefined;
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        texts.push(String(block.text));
        break;
      case 'tool_use':
      case 'server_tool_use':
        toolCalls.push({ id: String(block['id']), name: String(block['name']), arguments: JSON.stringify(block['input'] ?? {}) });
        break;
      case 'tool_result':
        toolResults.push({ callId: String(block['tool_use_id']), output: partsText(block['content'] ?? ''), isError: block['is_error'] === true });
        break;
      case 'thinking':
        thinking = { text: String(block['thinking']), signature: String(block['signature']) };
        break;
      case 'redacted_thinking':
        thinking = { text: '', signature: String(block['data']) };
        break;
      default:
        break;
    }
  }
  return conversationItem(message.role, { text: texts.join('\n'), toolCalls, toolResults, thinking });
}

/** The system prompt's text: the string, or the text blocks joined by blank lines. */
export function anthropicSystemText(system: AnthropicPrompt['system']): string | undefined {
  if (system === undefined) return undefined;
  return typeof system === 'string' ? system : system.map((block) => block.text).join('\n\n');
}

/**
 * The {@link ConversationView} of a Messages request: one item per message (a `system`-role message is a system
 * item, its text part of `system`), client tools with an `input_schema`.
 */
export function anthropicConversation(body: AnthropicPrompt & { readonly stream?: boolean | undefined }): ConversationView {
  const instructions = anthropicSystemText(body.system);
  const items = body.messages.map(anthropicItem);
  const tools = (body.tools ?? []).flatMap((tool) =>
    tool.input_schema === undefined ? [] : [{ name: tool.name, description: tool.description, parameters: tool.input_schema }],
  );
  return {
    model: body.model,
    stream: body.stream === true,
    instructions,
    system: systemText(instructions, items),
    items,
    tools,
  };
}
