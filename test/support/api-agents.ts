import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GATEWAY_TOOLS } from './gateway-rig.ts';
import { bigFile } from './gateway-agent.ts';

type Item = Record<string, unknown>;

const TOOLS = GATEWAY_TOOLS as unknown as { function: { name: string; description: string; parameters: object } }[];

/** The gateway test tools in the Responses shape. */
export const RESPONSES_TOOLS = TOOLS.map((t) => ({ type: 'function', name: t.function.name, description: t.function.description, parameters: t.function.parameters }));

/** The gateway test tools in the Anthropic shape. */
export const ANTHROPIC_TOOLS = TOOLS.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters }));

const prompt = (n: number): string => `Please look at src/mod-${n}.ts and fix the reducer.`;

/**
 * A coding agent on the Responses API, as Codex and pi run it: its system prompt is a leading developer item, it is
 * stateless (`store: false`, the whole input each time), it echoes every output item back, and it sends a
 * `prompt_cache_key`.
 */
export class ResponsesAgent {
  readonly input: Item[];
  readonly sdk: OpenAI;
  #turn = 0;
  /** Input length of the last call. */
  sentLength = 0;

  constructor(options: { baseURL: string; apiKey: string; system: string; headers?: Record<string, string> }) {
    this.sdk = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0, timeout: 60_000, ...(options.headers !== undefined ? { defaultHeaders: options.headers } : {}) });
    this.input = [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: options.system }] }];
  }

  async call(stream = false): Promise<{ output: Item[]; usage: Item | null }> {
    this.sentLength = this.input.length;
    const body = { model: 'gpt-4o', input: this.input, tools: RESPONSES_TOOLS, store: false, prompt_cache_key: 'agent-thread-1' };
    let response: { output: unknown[]; usage?: unknown };
    if (stream) response = (await this.sdk.responses.stream(body as never).finalResponse());
    else response = (await this.sdk.responses.create(body as never));
    const output = response.output as Item[];
    this.input.push(...output);
    return { output, usage: (response.usage ?? null) as Item | null };
  }

  /** One turn: a prompt, the model's call, the file's content, the model's answer. */
  async turn(stream = false): Promise<void> {
    const n = ++this.#turn;
    this.input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt(n) }] });
    const { output } = await this.call(stream);
    const call = output.find((o) => o['type'] === 'function_call');
    if (call === undefined) return;
    this.input.push({ type: 'function_call_output', call_id: call['call_id'], output: bigFile(n) });
    await this.call(stream);
  }
}

/**
 * A coding agent on the Anthropic Messages API, as pi and Claude Code run it: a system block, tools, and one
 * `cache_control` breakpoint on each of the system prompt, the last tool and the last block of the newest user turn
 * (moved forward every request).
 */
export class AnthropicAgent {
  readonly messages: Item[] = [];
  readonly sdk: Anthropic;
  readonly system: Item[];
  #turn = 0;
  sentLength = 0;

  constructor(options: { baseURL: string; apiKey: string; system: string }) {
    this.sdk = new Anthropic({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0, timeout: 60_000 });
    this.system = [{ type: 'text', text: options.system, cache_control: { type: 'ephemeral' } }];
  }

  /** The history with a breakpoint on the newest user turn's last block (older turns as they were, without one). */
  #withBreakpoint(): Item[] {
    const out = this.messages.map((m) => ({ ...m }));
    const last = out.findLastIndex((m) => m['role'] === 'user');
    const turn = out[last];
    if (turn !== undefined && Array.isArray(turn['content'])) {
      const blocks = turn['content'] as Item[];
      turn['content'] = [...blocks.slice(0, -1), { ...blocks.at(-1), cache_control: { type: 'ephemeral' } }];
    }
    return out;
  }

  async call(stream = false): Promise<{ content: Item[]; usage: Item }> {
    this.sentLength = this.messages.length;
    const tools = ANTHROPIC_TOOLS.map((t, i) => (i === ANTHROPIC_TOOLS.length - 1 ? { ...t, cache_control: { type: 'ephemeral' } } : t));
    const body = { model: 'claude-test', max_tokens: 4096, system: this.system, messages: this.#withBreakpoint(), tools };
    const message = stream ? await this.sdk.messages.stream(body as never).finalMessage() : await this.sdk.messages.create(body as never);
    const content = message.content as unknown as Item[];
    this.messages.push({ role: 'assistant', content });
    return { content, usage: message.usage as unknown as Item };
  }

  async turn(stream = false): Promise<void> {
    const n = ++this.#turn;
    this.messages.push({ role: 'user', content: [{ type: 'text', text: prompt(n) }] });
    const { content } = await this.call(stream);
    const use = content.find((b) => b['type'] === 'tool_use');
    if (use === undefined) return;
    this.messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use['id'], content: bigFile(n) }] });
    await this.call(stream);
  }
}
