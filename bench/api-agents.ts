/**
 * Coding agents of the `writers-api` and `instant-compaction` sections, one per provider API, each sending its
 * requests through the gateway the way that API's agents do (their SDKs, streamed):
 *
 * - `openai-chat`: a system message, the tools, `tool` messages for results (as the `writers` section's agent).
 * - `openai-responses` (as Codex and pi send it): the system prompt as a leading developer item, stateless
 *   (`store: false`, the whole input each time), `prompt_cache_key`, reasoning asked for with its encrypted content
 *   included; every output item is echoed back as it came (reasoning items included), tool results are
 *   `function_call_output` items.
 * - `anthropic-messages` (as pi and Claude Code send it): a system block and the newest user turn's last block each
 *   carrying a `cache_control` breakpoint (the latter moved forward every request, older turns sent without one);
 *   tool calls are `tool_use` blocks, results `tool_result` blocks of a user turn.
 *
 * All three play the same planned coding conversation (`codingConversation`): each call tells the loopback what the
 * model answers (`planned-reply.ts`), so a session's text is the same whatever its API, and the loopback's usage (real
 * o200k counts of what was sent) is what crosses the session's rungs.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ProviderApi } from '@baton/protocol';
import type { ReplySpec, ThinkingSpec } from '@baton/testing';
import OpenAI from 'openai';
import { AGENT_TOOLS, SYSTEM_PROMPT, prng, type Turn } from './coding-conversation.ts';
import { REPLY_HEADER, encodeReply } from './planned-reply.ts';

type Item = Record<string, unknown>;

interface FunctionTool {
  readonly function: { readonly name: string; readonly description: string; readonly parameters: object };
}

const TOOLS = AGENT_TOOLS as unknown as FunctionTool[];

/** The agent's tools in the Responses shape. */
export const RESPONSES_TOOLS = TOOLS.map((t) => ({ type: 'function', name: t.function.name, description: t.function.description, parameters: t.function.parameters, strict: false }));

/** The agent's tools in the Anthropic shape. */
export const ANTHROPIC_TOOLS = TOOLS.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters }));

/** Where an agent sends its calls and how it names itself. */
export interface BenchAgentOptions {
  /** The gateway's `http://host:port` (no `/v1`). */
  readonly gatewayOrigin: string;
  /** The session, in the path (`/s/<sid>/…`). */
  readonly sid: string;
  readonly model: string;
  readonly apiKey: string;
  /** Extra headers of every call (e.g. `x-baton-project`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A coding agent on one API, as the sections drive it. */
export interface BenchAgent {
  readonly api: ProviderApi;
  /** Total tokens (input + output, cached included) of the last reply, as the API reported them. */
  readonly lastUsage: number;
  /** Calls made so far. */
  readonly calls: number;
  /** Why each call that was sent again failed: the gateway's status and error, or the failed connection (see `sendWithRetries`). */
  readonly retried: readonly string[];
  /** One planned turn: the user's request, the model's tool call, the tool's output, the model's answer. */
  turn(turn: Turn): Promise<void>;
}

interface PlannedCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

function plannedCall(turn: Turn): PlannedCall {
  const call = (turn[1].tool_calls?.[0] ?? {}) as { id?: string; function?: { name?: string; arguments?: string } };
  return { id: call.id ?? 'call', name: call.function?.name ?? 'read_file', arguments: call.function?.arguments ?? '{}' };
}

const textOf = (m: Turn[number]): string => (typeof m.content === 'string' ? m.content : '');

/** What a turn's two calls are answered with. */
function plannedReplies(turn: Turn, thinking: (n: 0 | 1) => ThinkingSpec | undefined): [ReplySpec, ReplySpec] {
  const call = plannedCall(turn);
  const first = thinking(0);
  const second = thinking(1);
  return [
    { content: null, tool_calls: [{ id: call.id, name: call.name, arguments: call.arguments }], ...(first !== undefined ? { thinking: first } : {}) },
    { content: textOf(turn[3]), ...(second !== undefined ? { thinking: second } : {}) },
  ];
}

/** A failure an agent's SDK would retry: the gateway's 502 (its upstream connection failed) or no connection at all. */
function retryable(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionError || err instanceof Anthropic.APIConnectionError) return true;
  const status = (err as { status?: unknown } | null)?.status;
  return status === 502 || status === 503 || status === 504;
}

/**
 * Sends a call, and sends it again (at most twice) after a failure the agents' SDKs retry by default, noting why.
 * The SDKs' own retries are off so that they can be reported: a failed call is not recorded by the gateway, so sending
 * it again changes nothing in the session.
 */
async function sendWithRetries<T>(agent: { retried: string[] }, send: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (attempt >= 2 || !retryable(err)) throw err;
      // The SDKs' messages start with the HTTP status when there is one.
      agent.retried.push((err instanceof Error ? err.message : String(err)).slice(0, 160));
    }
  }
}

/** What every agent keeps: where it sends its calls, the usage of its last reply, its calls and why any was sent again. */
abstract class AgentBase {
  protected readonly options: BenchAgentOptions;
  lastUsage = 0;
  calls = 0;
  readonly retried: string[] = [];

  constructor(options: BenchAgentOptions) {
    this.options = options;
  }

  /** One call: counted, with the agent's headers and its planned reply, sent again after a failure SDKs retry. */
  protected send<T>(spec: ReplySpec, call: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    this.calls++;
    const headers = { ...this.options.headers, [REPLY_HEADER]: encodeReply(spec) };
    return sendWithRetries(this, () => call(headers));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAI chat completions

export class ChatAgent extends AgentBase implements BenchAgent {
  readonly api = 'openai-chat' as const;
  readonly messages: Item[] = [{ role: 'system', content: SYSTEM_PROMPT }];
  readonly #sdk: OpenAI;

  constructor(options: BenchAgentOptions) {
    super(options);
    this.#sdk = new OpenAI({ baseURL: `${options.gatewayOrigin}/s/${options.sid}/v1`, apiKey: options.apiKey, maxRetries: 0, timeout: 300_000 });
  }

  async #call(spec: ReplySpec): Promise<void> {
    const body = { model: this.options.model, messages: this.messages, tools: AGENT_TOOLS, stream_options: { include_usage: true } };
    const completion = await this.send(spec, (headers) => this.#sdk.chat.completions.stream(body as never, { headers }).finalChatCompletion());
    const message = completion.choices[0]?.message;
    const calls = message?.tool_calls?.length ? { tool_calls: message.tool_calls } : {};
    this.messages.push({ role: 'assistant', content: message?.content ?? null, ...calls });
    this.lastUsage = completion.usage?.total_tokens ?? this.lastUsage;
  }

  async turn(turn: Turn): Promise<void> {
    const [callReply, answer] = plannedReplies(turn, () => undefined);
    this.messages.push({ role: 'user', content: textOf(turn[0]) });
    await this.#call(callReply);
    this.messages.push({ role: 'tool', tool_call_id: plannedCall(turn).id, content: textOf(turn[2]) });
    await this.#call(answer);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAI Responses

/**
 * Base64-like opaque text standing for a reasoning item's encrypted content. Kept short (240 characters): the loopback
 * counts it as prompt text in every later request, where a provider drops earlier turns' reasoning from the prompt.
 */
function encryptedContent(seed: number): string {
  const next = prng(seed);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  return `gAAAAA${Array.from({ length: 240 }, () => alphabet[next(alphabet.length)]).join('')}==`;
}

export class ResponsesAgent extends AgentBase implements BenchAgent {
  readonly api = 'openai-responses' as const;
  readonly input: Item[] = [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: SYSTEM_PROMPT }] }];
  readonly #sdk: OpenAI;
  #reasoning = 0;

  constructor(options: BenchAgentOptions) {
    super(options);
    this.#sdk = new OpenAI({ baseURL: `${options.gatewayOrigin}/s/${options.sid}/v1`, apiKey: options.apiKey, maxRetries: 0, timeout: 300_000 });
  }

  /** The request fields besides `input` and `tools`, as Codex and pi send them. */
  params(): Item {
    return {
      model: this.options.model,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: this.options.sid,
    };
  }

  async #call(spec: ReplySpec): Promise<void> {
    const body = { ...this.params(), input: this.input, tools: RESPONSES_TOOLS };
    const response = await this.send(spec, (headers) => this.#sdk.responses.stream(body as never, { headers }).finalResponse());
    this.input.push(...(response.output as unknown as Item[]));
    const usage = response.usage;
    if (usage !== undefined && usage !== null) this.lastUsage = usage.total_tokens;
  }

  async turn(turn: Turn): Promise<void> {
    const thinking = (): ThinkingSpec => {
      const n = ++this.#reasoning;
      return { text: `**Planning step ${n}**\n\nRead the file the user named, then check the lock order before changing anything.`, signature: encryptedContent(n * 7919 + this.options.sid.length) };
    };
    const [callReply, answer] = plannedReplies(turn, thinking);
    this.input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: textOf(turn[0]) }] });
    await this.#call(callReply);
    this.input.push({ type: 'function_call_output', call_id: plannedCall(turn).id, output: textOf(turn[2]) });
    await this.#call(answer);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Anthropic Messages

const EPHEMERAL = { type: 'ephemeral' } as const;

export class AnthropicAgent extends AgentBase implements BenchAgent {
  readonly api = 'anthropic-messages' as const;
  readonly system: Item[] = [{ type: 'text', text: SYSTEM_PROMPT, cache_control: EPHEMERAL }];
  readonly messages: Item[] = [];
  readonly #sdk: Anthropic;

  constructor(options: BenchAgentOptions) {
    super(options);
    this.#sdk = new Anthropic({ baseURL: `${options.gatewayOrigin}/s/${options.sid}`, apiKey: options.apiKey, maxRetries: 0, timeout: 300_000 });
  }

  /** The history with a breakpoint on the newest user turn's last block (older turns as they were, without one). */
  #withBreakpoint(): Item[] {
    const out = this.messages.map((m) => ({ ...m }));
    const turn = out.findLast((m) => m['role'] === 'user');
    if (turn !== undefined && Array.isArray(turn['content'])) {
      const blocks = turn['content'] as Item[];
      turn['content'] = [...blocks.slice(0, -1), { ...blocks.at(-1), cache_control: EPHEMERAL }];
    }
    return out;
  }

  async #call(spec: ReplySpec): Promise<void> {
    const body = { model: this.options.model, max_tokens: 4096, system: this.system, messages: this.#withBreakpoint(), tools: ANTHROPIC_TOOLS };
    const message = await this.send(spec, (headers) => this.#sdk.messages.stream(body as never, { headers }).finalMessage());
    this.messages.push({ role: 'assistant', content: message.content });
    const u = message.usage;
    this.lastUsage = u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + u.output_tokens;
  }

  async turn(turn: Turn): Promise<void> {
    const [callReply, answer] = plannedReplies(turn, () => undefined);
    this.messages.push({ role: 'user', content: [{ type: 'text', text: textOf(turn[0]) }] });
    await this.#call(callReply);
    this.messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: plannedCall(turn).id, content: textOf(turn[2]) }] });
    await this.#call(answer);
  }
}

export function createAgent(api: ProviderApi, options: BenchAgentOptions): BenchAgent {
  switch (api) {
    case 'openai-chat':
      return new ChatAgent(options);
    case 'openai-responses':
      return new ResponsesAgent(options);
    case 'anthropic-messages':
      return new AnthropicAgent(options);
  }
}
