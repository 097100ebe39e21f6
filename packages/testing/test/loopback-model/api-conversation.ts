import type { MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';

/*
 * The chat fixtures of these tests, re-expressed in the other two APIs the way their agents send them: Responses
 * input items (Codex-like) and Anthropic messages (Claude-Code-like: tool results in the next user message).
 */

function textOf(content: ChatCompletionMessageParam['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => ('text' in part ? part.text : '')).join('\n');
}

function functionCalls(message: ChatCompletionMessageParam): { id: string; name: string; arguments: string }[] {
  if (message.role !== 'assistant') return [];
  return (message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : []));
}

/** Responses `instructions` (the system messages) and `input` items for a chat conversation. */
export function responsesFrom(messages: readonly ChatCompletionMessageParam[]): { instructions: string; input: ResponseInputItem[] } {
  const instructions: string[] = [];
  const input: ResponseInputItem[] = [];
  for (const message of messages) {
    if (message.role === 'system') instructions.push(textOf(message.content));
    else if (message.role === 'user') input.push({ role: 'user', content: textOf(message.content) });
    else if (message.role === 'tool') input.push({ type: 'function_call_output', call_id: message.tool_call_id, output: textOf(message.content) });
    else if (message.role === 'assistant') {
      const text = textOf(message.content);
      if (text !== '') input.push({ role: 'assistant', content: text });
      for (const call of functionCalls(message)) input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
    }
  }
  return { instructions: instructions.join('\n\n'), input };
}

/** Anthropic `system` and `messages` for a chat conversation (consecutive tool results and user text merged). */
export function anthropicFrom(messages: readonly ChatCompletionMessageParam[]): { system: string; messages: MessageParam[] } {
  const system: string[] = [];
  const out: MessageParam[] = [];
  let pendingResults: ToolResultBlockParam[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      system.push(textOf(message.content));
    } else if (message.role === 'tool') {
      pendingResults.push({ type: 'tool_result', tool_use_id: message.tool_call_id, content: textOf(message.content) });
    } else if (message.role === 'user') {
      out.push({ role: 'user', content: [...pendingResults, { type: 'text', text: textOf(message.content) }] });
      pendingResults = [];
    } else if (message.role === 'assistant') {
      if (pendingResults.length > 0) out.push({ role: 'user', content: pendingResults });
      pendingResults = [];
      const text = textOf(message.content);
      const calls = functionCalls(message).map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: JSON.parse(c.arguments) as Record<string, unknown> }));
      out.push({ role: 'assistant', content: [...(text === '' ? [] : [{ type: 'text' as const, text }]), ...calls] });
    }
  }
  if (pendingResults.length > 0) out.push({ role: 'user', content: pendingResults });
  return { system: system.join('\n\n'), messages: out };
}

/** The chat tools as Responses function tools. */
export function responsesToolsFrom(tools: readonly ChatCompletionTool[]): FunctionTool[] {
  return tools.flatMap((t) =>
    t.type === 'function' ? [{ type: 'function' as const, name: t.function.name, description: t.function.description ?? null, parameters: t.function.parameters ?? null, strict: false }] : [],
  );
}

/** The chat tools as Anthropic client tools. */
export function anthropicToolsFrom(tools: readonly ChatCompletionTool[]): Tool[] {
  return tools.flatMap((t) =>
    t.type === 'function' ? [{ name: t.function.name, description: t.function.description ?? '', input_schema: { type: 'object' as const, ...t.function.parameters } }] : [],
  );
}
