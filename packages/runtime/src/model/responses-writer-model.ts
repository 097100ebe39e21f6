import type OpenAI from 'openai';
import { partsText } from '@baton/protocol';
import { carriedParams, type WriterModel, type WriterModelReply, type WriterRequest, type WriterToolOutput } from './writer-model.ts';

/**
 * Where a Responses session's system prompt goes: text becomes `instructions`; items (an agent's leading system and
 * developer messages, as Codex and pi send them) open the input, as the agent sends them.
 */
export function systemOf(system: WriterRequest['system']): { instructions: string | null; items: Record<string, unknown>[] } {
  if (system === null) return { instructions: null, items: [] };
  if (typeof system === 'string') return { instructions: system, items: [] };
  if (system.every((s) => typeof s === 'string')) return { instructions: (system).join('\n\n'), items: [] };
  return { instructions: null, items: (system).map((s) => (typeof s === 'string' ? { role: 'system', content: s } : (s as Record<string, unknown>))) };
}

const CALL_OUTPUT: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  local_shell_call: 'local_shell_call_output',
};

/**
 * A writer on the OpenAI Responses API, stateless (`store: false`, no `previous_response_id`): every request sends the
 * whole input — the forked items, Baton's turns, and each reply's output items as they came (encrypted reasoning
 * included, so it round-trips). A custom tool's free-form input reaches the tool map as the argument `input`.
 */
export class ResponsesWriterModel implements WriterModel {
  readonly api = 'openai-responses' as const;
  readonly #openai: OpenAI;
  readonly #request: WriterRequest;
  readonly #input: Record<string, unknown>[];
  /** Call id → the output item type that answers it. */
  readonly #outputTypes = new Map<string, string>();

  constructor(openai: OpenAI, request: WriterRequest) {
    this.#openai = openai;
    this.#request = request;
    this.#input = [...systemOf(request.system).items, ...request.prefix];
  }

  addUser(text: string): void {
    this.#input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  }

  addToolOutputs(outputs: readonly WriterToolOutput[]): void {
    for (const o of outputs) this.#input.push({ type: this.#outputTypes.get(o.id) ?? 'function_call_output', call_id: o.id, output: o.output });
  }

  async call(signal: AbortSignal): Promise<WriterModelReply> {
    const { model, tools, params, headers } = this.#request;
    const { instructions } = systemOf(this.#request.system);
    const body = {
      model,
      ...(instructions !== null ? { instructions } : {}),
      input: this.#input,
      ...(tools.length > 0 ? { tools } : {}),
      ...carriedParams(params),
      store: false,
    };
    const res = await this.#openai.responses.create(body as never, { signal, ...(Object.keys(headers).length > 0 ? { headers } : {}) });
    const output = (res.output ?? []) as unknown as Record<string, unknown>[];
    const texts: string[] = [];
    const reasoning: string[] = [];
    const toolCalls: { id: string; name: string; arguments: string }[] = [];
    for (const item of output) {
      this.#input.push(item);
      const type = String(item['type']);
      const callId = typeof item['call_id'] === 'string' ? item['call_id'] : '';
      if (type === 'message') texts.push(partsText(item['content']));
      else if (type === 'reasoning') reasoning.push(partsText(item['summary']));
      else if (type === 'function_call') toolCalls.push({ id: callId, name: String(item['name']), arguments: typeof item['arguments'] === 'string' ? item['arguments'] : '' });
      else if (type === 'custom_tool_call') toolCalls.push({ id: callId, name: String(item['name']), arguments: JSON.stringify({ input: item['input'] }) });
      if (CALL_OUTPUT[type] !== undefined) this.#outputTypes.set(callId, CALL_OUTPUT[type]);
    }
    const incomplete = (res as { incomplete_details?: { reason?: string } | null }).incomplete_details?.reason;
    const finishReason = toolCalls.length > 0 ? 'tool_calls' : incomplete === 'max_output_tokens' ? 'length' : incomplete !== undefined ? incomplete : 'stop';
    const usage = res.usage;
    return {
      content: texts.length > 0 ? texts.join('\n') : null,
      reasoning: reasoning.some((r) => r !== '') ? reasoning.join('\n') : null,
      toolCalls,
      finishReason,
      usage: { prompt: usage?.input_tokens ?? 0, completion: usage?.output_tokens ?? 0, cached: usage?.input_tokens_details?.cached_tokens ?? 0 },
    };
  }
}
