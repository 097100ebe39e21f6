import type OpenAI from 'openai';
import { carriedParams, type WriterModel, type WriterModelReply, type WriterRequest, type WriterToolOutput } from './writer-model.ts';

/** A writer on OpenAI chat completions: the prefix carries the agent's system messages; replies join as assistant messages. */
export class ChatWriterModel implements WriterModel {
  readonly api = 'openai-chat' as const;
  readonly #openai: OpenAI;
  readonly #request: WriterRequest;
  readonly #messages: Record<string, unknown>[];

  constructor(openai: OpenAI, request: WriterRequest) {
    this.#openai = openai;
    this.#request = request;
    this.#messages = [...request.prefix];
  }

  addUser(text: string): void {
    this.#messages.push({ role: 'user', content: text });
  }

  addToolOutputs(outputs: readonly WriterToolOutput[]): void {
    for (const o of outputs) this.#messages.push({ role: 'tool', tool_call_id: o.id, content: o.output });
  }

  async call(signal: AbortSignal): Promise<WriterModelReply> {
    const { model, tools, params, headers } = this.#request;
    const res = await this.#openai.chat.completions.create(
      { model, messages: this.#messages as never, ...(tools.length > 0 ? { tools: tools as never } : {}), ...carriedParams(params) },
      { signal, ...(Object.keys(headers).length > 0 ? { headers } : {}) },
    );
    const choice = res.choices[0];
    const msg = choice?.message;
    const toolCalls = (msg?.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : []));
    const reasoning = (msg as { reasoning_content?: unknown } | undefined)?.reasoning_content;
    this.#messages.push({
      role: 'assistant',
      content: msg?.content ?? null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
    });
    return {
      content: msg?.content ?? null,
      reasoning: typeof reasoning === 'string' ? reasoning : null,
      toolCalls,
      finishReason: choice?.finish_reason ?? null,
      usage: { prompt: res.usage?.prompt_tokens ?? 0, completion: res.usage?.completion_tokens ?? 0, cached: res.usage?.prompt_tokens_details?.cached_tokens ?? 0 },
    };
  }
}
