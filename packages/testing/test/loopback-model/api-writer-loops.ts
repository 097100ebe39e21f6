import type Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, TextBlockParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { execute, type LoopToolNames, type LoopTurn } from './writer-loop.ts';

/**
 * Drives a writer run over the Responses API like Codex does with `store: false`: every output item goes back into
 * `input`, then one `function_call_output` per call, until a turn makes no call. Mutates `input`.
 */
export async function runResponsesWriterLoop(
  client: OpenAI,
  instructions: string,
  input: ResponseInputItem[],
  tools: FunctionTool[],
  names: LoopToolNames,
  maxTurns = 8,
): Promise<LoopTurn[]> {
  const turns: LoopTurn[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    const res = await client.responses.create({ model: 'loopback', instructions, input, tools, store: false, parallel_tool_calls: true });
    const calls = res.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
    input.push(...(res.output as ResponseInputItem[]));
    turns.push({
      calls: calls.map((c) => ({ name: c.name, args: JSON.parse(c.arguments) as Record<string, unknown> })),
      content: res.output_text === '' ? null : res.output_text,
      finishReason: res.status ?? 'unknown',
    });
    if (calls.length === 0) return turns;
    for (const call of calls) {
      const output = await execute(names, call.name, JSON.parse(call.arguments) as Record<string, unknown>);
      input.push({ type: 'function_call_output', call_id: call.call_id, output });
    }
  }
  throw new Error(`writer loop did not finish in ${maxTurns} turns`);
}

/**
 * Drives a writer run over the Messages API like Claude Code does: streamed replies, whose blocks go back as the
 * assistant message, the tool results as the next user message, until a turn makes no call. Mutates `messages`.
 */
export async function runAnthropicWriterLoop(
  client: Anthropic,
  system: string | TextBlockParam[],
  messages: MessageParam[],
  tools: Tool[],
  names: LoopToolNames,
  maxTurns = 8,
): Promise<LoopTurn[]> {
  const turns: LoopTurn[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    const res = await client.messages.stream({ model: 'loopback', max_tokens: 32_000, system, messages, tools }).finalMessage();
    const calls = res.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
    const text = res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    messages.push({ role: 'assistant', content: res.content });
    turns.push({ calls: calls.map((c) => ({ name: c.name, args: c.input as Record<string, unknown> })), content: text === '' ? null : text, finishReason: res.stop_reason ?? 'unknown' });
    if (calls.length === 0) return turns;
    const results: ToolResultBlockParam[] = [];
    for (const call of calls) {
      results.push({ type: 'tool_result', tool_use_id: call.id, content: await execute(names, call.name, call.input as Record<string, unknown>) });
    }
    messages.push({ role: 'user', content: results });
  }
  throw new Error(`writer loop did not finish in ${maxTurns} turns`);
}
