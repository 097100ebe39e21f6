import type Anthropic from '@anthropic-ai/sdk';
import type { LazyClient } from './model-clients.ts';
import { fixedBreakpoints, placeBreakpoints } from './cache-breakpoints.ts';
import { carriedParams, type WriterModel, type WriterModelReply, type WriterRequest, type WriterToolOutput } from './writer-model.ts';

/** Output a writer may produce per call when the agent's requests do not say (a checkpoint plus its tool calls). */
export const DEFAULT_MAX_TOKENS = 16_384;

const STOP_REASONS: Readonly<Record<string, string>> = { tool_use: 'tool_calls', end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', refusal: 'content_filter', pause_turn: 'stop' };

/** The Anthropic `system` for a system prompt: blocks as the agent sent them, text as text. */
function systemOf(system: WriterRequest['system']): string | readonly object[] | null {
  if (system === null || typeof system === 'string') return system;
  if (system.every((s) => typeof s === 'string')) return (system).join('\n\n');
  return system;
}

/**
 * A writer on the Anthropic Messages API: the forked messages, then Baton's turns as user turns (joined to the user
 * turn before them, so roles keep alternating), tool outputs as `tool_result` blocks, and each reply's content blocks
 * as they came (thinking blocks keep their signatures). Cache breakpoints go at the end of the forked prefix and at the
 * newest message, at most four in all.
 */
export class AnthropicWriterModel implements WriterModel {
  readonly api = 'anthropic-messages' as const;
  readonly #anthropic: LazyClient<Anthropic>;
  readonly #request: WriterRequest;
  readonly #messages: Record<string, unknown>[];
  /** Where the forked prefix ends: its last message and that message's last block (before any of Baton's). */
  readonly #prefixEnd: { message: number; block: number };

  constructor(anthropic: LazyClient<Anthropic>, request: WriterRequest) {
    this.#anthropic = anthropic;
    this.#request = request;
    this.#messages = [...request.prefix];
    const last = request.prefix.at(-1);
    const content = last?.['content'];
    this.#prefixEnd = { message: request.prefix.length - 1, block: Array.isArray(content) ? content.length - 1 : 0 };
  }

  #addUserBlocks(blocks: readonly Record<string, unknown>[]): void {
    const last = this.#messages.at(-1);
    if (last !== undefined && last['role'] === 'user') {
      const content = last['content'];
      const before: unknown[] = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
      this.#messages[this.#messages.length - 1] = { ...last, content: [...before, ...blocks] };
    } else {
      this.#messages.push({ role: 'user', content: [...blocks] });
    }
  }

  addUser(text: string): void {
    this.#addUserBlocks([{ type: 'text', text }]);
  }

  addToolOutputs(outputs: readonly WriterToolOutput[]): void {
    this.#addUserBlocks(outputs.map((o) => ({ type: 'tool_result', tool_use_id: o.id, content: o.output })));
  }

  async call(signal: AbortSignal): Promise<WriterModelReply> {
    const { model, tools, params, headers } = this.#request;
    const system = systemOf(this.#request.system);
    const carried = carriedParams(params);
    const messages = this.#prefixEnd.message >= 0 ? placeBreakpoints(this.#messages, this.#prefixEnd, fixedBreakpoints(tools, system)) : this.#messages;
    const body = {
      model,
      max_tokens: typeof carried['max_tokens'] === 'number' ? carried['max_tokens'] : DEFAULT_MAX_TOKENS,
      ...(system !== null ? { system } : {}),
      messages,
      ...(tools.length > 0 ? { tools } : {}),
      ...carried,
    };
    const anthropic = await this.#anthropic();
    const res = await anthropic.messages.create(body as never, { signal, ...(Object.keys(headers).length > 0 ? { headers } : {}) });
    const content = res.content as unknown as Record<string, unknown>[];
    this.#messages.push({ role: 'assistant', content });
    const texts = content.flatMap((b) => (b['type'] === 'text' && typeof b['text'] === 'string' ? [b['text']] : []));
    const thinking = content.flatMap((b) => (b['type'] === 'thinking' && typeof b['thinking'] === 'string' ? [b['thinking']] : []));
    const toolCalls = content.flatMap((b) => (b['type'] === 'tool_use' ? [{ id: String(b['id']), name: String(b['name']), arguments: JSON.stringify(b['input'] ?? {}) }] : []));
    const usage = res.usage;
    const cached = usage.cache_read_input_tokens ?? 0;
    return {
      content: texts.length > 0 ? texts.join('\n') : null,
      reasoning: thinking.length > 0 ? thinking.join('\n') : null,
      toolCalls,
      finishReason: res.stop_reason === null ? null : (STOP_REASONS[res.stop_reason] ?? res.stop_reason),
      usage: { prompt: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + cached, completion: usage.output_tokens, cached },
    };
  }
}
