import { defaultTokenCounter, type TokenCounter } from '@baton/memory-store';
import { type Message } from '@baton/protocol';

// Chat-format overheads, as the recording's generator counts a provider prompt (fixtures/session-builder.ts).
const PROMPT_OVERHEAD = 3 + 4;
const MESSAGE_OVERHEAD = 4;
const CALL_OVERHEAD = 3;

/** A tool call's field as text: a string as it is, `''` when absent, anything else as JSON. */
function fieldText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The demo's own conversation, as the agent it plays keeps it: every appended turn, until a rebuild replaces it with
 * the rebuilt context. The recording's usage was measured on the original conversation; once the history has been
 * replaced, `withUsage` recounts the prompt of later assistant messages over the new history (o200k_base, the way
 * the recording's generator counted), which is what the provider would then report.
 */
export class AgentHistory {
  readonly #counter: TokenCounter;
  readonly #base: number;
  #messages: Message[] = [];
  #replaced = false;

  /** `system` as the agent sent it at `open` (several parts count as one system message each). */
  constructor(system: string | readonly (string | object)[] | undefined, tools: unknown, counter: TokenCounter = defaultTokenCounter) {
    this.#counter = counter;
    const parts = (system === undefined ? [] : typeof system === 'string' ? [system] : system).map((p) => (typeof p === 'string' ? p : JSON.stringify(p)));
    const systemTokens = parts.reduce((sum, part, i) => sum + (i > 0 ? MESSAGE_OVERHEAD : 0) + counter.count(part), 0);
    this.#base = PROMPT_OVERHEAD + systemTokens + (tools === undefined ? 0 : counter.count(JSON.stringify(tools)));
  }

  get length(): number {
    return this.#messages.length;
  }

  /** Prompt tokens of the whole history, system prompt and tools included. */
  get promptTokens(): number {
    return this.#messages.reduce((sum, m) => sum + MESSAGE_OVERHEAD + this.messageTokens(m), this.#base);
  }

  /** Tokens of one message's content and tool calls. */
  messageTokens(m: Message): number {
    let tokens = typeof m.content === 'string' ? this.#counter.count(m.content) : m.content === null ? 0 : this.#counter.count(JSON.stringify(m.content));
    for (const call of m.tool_calls ?? []) {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function;
      tokens += CALL_OVERHEAD + this.#counter.count(fieldText(fn?.name)) + this.#counter.count(fieldText(fn?.arguments));
    }
    return tokens;
  }

  /** Replaces the history (with a rebuild's context). */
  replace(context: readonly Message[]): void {
    this.#messages = [...context];
    this.#replaced = true;
  }

  /**
   * The turn as the agent sends it, added to the history: unchanged until the history was replaced, then with each
   * assistant message's usage recounted over the history before it (completion tokens as recorded).
   */
  take(turn: readonly Message[]): Message[] {
    const out: Message[] = [];
    for (const m of turn) {
      const sent = this.#replaced && m.usage !== undefined ? this.#recounted(m, m.usage.completion_tokens) : m;
      out.push(sent);
      this.#messages.push(sent);
    }
    return out;
  }

  #recounted(m: Message, completion: number): Message {
    const prompt = this.promptTokens;
    return { ...m, usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
  }
}
