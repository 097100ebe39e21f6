/**
 * A coding agent's conversation as the `gateway` section's agents play it: a system prompt and the agent's tools,
 * then turns of a user request → the model's `read_file` call → the file's content → the model's short answer. The
 * history only grows, and every reply is echoed back the way agents do (the openai SDK's message shape).
 */
import type { ChatReply } from './timed-chat-call.ts';

export const AGENT_SYSTEM = 'You are a careful coding agent working in a TypeScript repository. Keep changes small and run the tests.';

/** The agent's tools (read_file / write_file / bash): requests with tools are the ones the gateway records. */
export const AGENT_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Write a file.',
      parameters: { type: 'object', properties: { file_path: { type: 'string' }, text: { type: 'string' } }, required: ['file_path', 'text'] },
    },
  },
  {
    type: 'function',
    function: { name: 'bash', description: 'Run a command.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  },
];

type HistoryMessage = Record<string, unknown> & { readonly role: string };

/** About a token per four characters of a message's JSON, as the gateway estimates what is new since a reply. */
export const estimateTokens = (m: object): number => Math.ceil(JSON.stringify(m).length / 4);

export class AgentConversation {
  readonly messages: HistoryMessage[] = [{ role: 'system', content: AGENT_SYSTEM }];
  /** Length of the history the last call sent. */
  sentLength = 0;
  /** Usage total of the last reply. */
  lastUsage: number | null = null;
  calls = 0;
  #turn = 0;

  /**
   * @param name distinguishes the file contents of one conversation from another's
   * @param fileBytes size of each file the model reads
   * @param firstFileBytes size of the first one (default `fileBytes`): a conversation with one huge tool output
   */
  constructor(
    readonly name: string,
    readonly fileBytes: number,
    readonly firstFileBytes = fileBytes,
  ) {
    this.#userMessage();
  }

  /** The request body of the next call (the history so far); without the tools, the gateway does not record it. */
  body(model: string, stream: boolean, tools = true): string {
    this.sentLength = this.messages.length;
    this.calls++;
    return JSON.stringify({
      model,
      messages: this.messages,
      ...(tools ? { tools: AGENT_TOOLS } : {}),
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
  }

  /** Echoes the reply into the history, then adds what comes next: the file it asked for, or the next request. */
  reply(reply: ChatReply): void {
    const calls = reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    this.messages.push({ role: 'assistant', content: reply.content, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    this.lastUsage = reply.usage;
    const call = reply.toolCalls[0];
    if (call !== undefined) this.messages.push({ role: 'tool', tool_call_id: call.id, content: this.#file(this.#turn) });
    else this.#userMessage();
  }

  /** The gateway's lower bound of the next call's size: the last usage plus its estimate of what is new. */
  nextEstimate(): number {
    return (this.lastUsage ?? 0) + this.messages.slice(this.sentLength).reduce((sum, m) => sum + estimateTokens(m), 0);
  }

  /** Messages the next call adds to what the last one sent. */
  get unsent(): number {
    return this.messages.length - this.sentLength;
  }

  /** Grows the last (unsent) message until the next call's estimate reaches `tokens`. */
  padTo(tokens: number): void {
    const last = this.messages.at(-1);
    if (last === undefined || typeof last['content'] !== 'string') throw new Error('the last message has no text to pad');
    let text = last['content'];
    for (let k = 0; this.nextEstimate() < tokens; k++) {
      text += `\n// review note ${k}: amounts stay in integer cents; refunds are negative line items, never a second total.`;
      this.messages[this.messages.length - 1] = { ...last, content: text };
    }
  }

  #userMessage(): void {
    this.#turn++;
    this.messages.push({ role: 'user', content: `Please look at src/mod-${this.#turn}.ts and fix the reducer.` });
  }

  /** A source file of about `fileBytes` characters, different for every conversation and turn. */
  #file(turn: number): string {
    const lines: string[] = [];
    let size = 0;
    const bytes = turn === 1 ? this.firstFileBytes : this.fileBytes;
    for (let j = 0; size < bytes; j++) {
      const line = `export const value_${this.name}_${turn}_${j} = computeReducerStep(${turn * 1000 + j}, "module-${turn}");`;
      lines.push(line);
      size += line.length + 1;
    }
    return lines.join('\n');
  }
}
