import { extractiveStep, parseWriterPaths, type RecordedRequest, type ScriptStep } from '@baton/testing';
import OpenAI from 'openai';
import { GATEWAY_TOOLS } from './gateway-rig.ts';

/** Whether a loopback request is one of the daemon's writer calls (its writer task states the checkpoint path). */
export function isWriterRequest(req: RecordedRequest): boolean {
  return writerTaskIndex(req) >= 0;
}

/** Index of the writer task in a writer request (the first user message stating a checkpoint path), else -1. */
export function writerTaskIndex(req: RecordedRequest): number {
  return req.body.messages.findIndex((m) => m.role === 'user' && typeof m.content === 'string' && parseWriterPaths(m.content) !== undefined);
}

/** A source file's content of about 1 600 tokens, different for every `n`. */
export function bigFile(n: number): string {
  return Array.from({ length: 130 }, (_, j) => `export const value_${n}_${j} = computeReducerStep(${n * 1000 + j}, "module-${n}");`).join('\n');
}

/**
 * The agent's model on the loopback: to a user message it answers with a `read_file` call for the file the turn is
 * about, to a tool result with a short text. Writer requests go to the loopback's extractive writer.
 */
export function agentResponder(req: RecordedRequest): ScriptStep {
  if (isWriterRequest(req)) return extractiveStep(req);
  const last = req.body.messages.at(-1);
  const turn = req.body.messages.filter((m) => m.role === 'user').length;
  if (last?.role === 'user') return { reply: { tool_calls: [{ name: 'read_file', arguments: { file_path: `src/mod-${turn}.ts` } }] } };
  return { reply: { content: `Read src/mod-${turn}.ts: the reducer double-counts refunds; I fixed it and kept the API on port 8080.` } };
}

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** A coding agent as the gateway sees it: the openai SDK, one growing history, the agent's own key. */
export class SdkAgent {
  readonly history: Msg[];
  readonly sdk: OpenAI;
  readonly model: string;
  readonly stream: boolean;
  /** Length of the history the last call sent. */
  sentLength = 0;
  #turn = 0;

  constructor(options: { baseURL: string; apiKey: string; system: string; model?: string; stream?: boolean; headers?: Record<string, string> }) {
    this.sdk = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0, timeout: 60_000, ...(options.headers !== undefined ? { defaultHeaders: options.headers } : {}) });
    this.history = [{ role: 'system', content: options.system }];
    this.model = options.model ?? 'gpt-4o';
    this.stream = options.stream ?? false;
  }

  /** Sends the history; appends the reply the way agents echo it. Returns it with the usage the agent saw. */
  async call(): Promise<{ message: OpenAI.Chat.Completions.ChatCompletionMessage; usage: OpenAI.CompletionUsage | undefined }> {
    this.sentLength = this.history.length;
    const tools = GATEWAY_TOOLS as OpenAI.Chat.Completions.ChatCompletionTool[];
    let message: OpenAI.Chat.Completions.ChatCompletionMessage;
    let usage: OpenAI.CompletionUsage | undefined;
    if (this.stream) {
      const stream = this.sdk.chat.completions.stream({ model: this.model, messages: this.history, tools, stream_options: { include_usage: true } });
      const completion = await stream.finalChatCompletion();
      message = completion.choices[0]?.message ?? { role: 'assistant', content: null, refusal: null };
      usage = completion.usage;
    } else {
      const res = await this.sdk.chat.completions.create({ model: this.model, messages: this.history, tools });
      message = res.choices[0]?.message ?? { role: 'assistant', content: null, refusal: null };
      usage = res.usage;
    }
    const calls = message.tool_calls?.length ? { tool_calls: message.tool_calls } : {};
    this.history.push({ role: 'assistant', content: message.content, ...calls });
    return { message, usage };
  }

  /** One turn: a user message naming a file, the model's read call, the file's content, the model's answer. */
  async turn(): Promise<void> {
    const n = ++this.#turn;
    this.history.push({ role: 'user', content: `Please look at src/mod-${n}.ts and fix the reducer.` });
    const { message } = await this.call();
    const id = message.tool_calls?.[0]?.id;
    if (id === undefined) return;
    this.history.push({ role: 'tool', tool_call_id: id, content: bigFile(n) });
    await this.call();
  }
}
