import Anthropic from '@anthropic-ai/sdk';
import type { ProviderApi } from '@baton/protocol';
import { extractiveStep, type RecordedRequest, type ScriptStep } from '@baton/testing';
import OpenAI from 'openai';
import { isWriterRequest } from './gateway-agent.ts';
import type { Exchange } from './gateway-rig.ts';

type Item = Record<string, unknown>;

/**
 * An agent Baton's writers cannot write with — its only tools run a command and search the web — working through one
 * long user turn: one prompt, then tool step after tool step until the model says it is done. One loop per provider
 * API, through the provider's own SDK, non-streaming (the upstream's answers are read by the test from the tap).
 */

/** The agent's tools, in chat terms: neither writes a file, so writers run in delta mode with Baton's own tools. */
const TOOLS = [
  { name: 'exec_command', description: 'Run a shell command.', parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
  { name: 'web_search', description: 'Search the web.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
];

/** The model id the loop names in each API. */
export const TOOL_LOOP_MODELS: Readonly<Record<ProviderApi, string>> = { 'openai-chat': 'gpt-4o', 'openai-responses': 'gpt-4o', 'anthropic-messages': 'claude-test' };

export const PROMPT = 'Please find why the build of packages/orders fails and fix it; keep the public API as it is.';

/** A command's output of about 2 400 characters, different for every step. */
export function commandOutput(step: number): string {
  return Array.from({ length: 40 }, (_, j) => `src/orders/step-${step}/file-${j}.ts:${j + 1}: warning: reducer double-counts refund ${step * 100 + j}`).join('\n');
}

const isAgentRequest = (req: RecordedRequest): boolean => req.conversation.tools.some((t) => t.name === 'exec_command');

/** Strips the user's quotes from whatever a writer writes: its checkpoints never quote the user, and fail validation. */
function unquoted(value: unknown): unknown {
  if (typeof value === 'string') return value.includes('## §') ? value.replace(/^[ \t]*>.*$/gm, '') : value;
  if (Array.isArray(value)) return value.map(unquoted);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unquoted(v)]));
  return value;
}

/**
 * The upstream model: the agent's requests are answered with a command to run until `steps` commands ran (counted
 * across the whole run, since a rewritten request no longer shows them all), then with a closing text; writer requests
 * by the extractive writer with every quote of the user removed (so validation refuses §1); anything else (a
 * compaction's summary request) with a short summary.
 */
export function toolLoopModel(steps: number): (req: RecordedRequest) => ScriptStep {
  let commands = 0;
  return (req) => {
    if (isWriterRequest(req)) {
      const step = extractiveStep(req);
      if (typeof step === 'object' && 'reply' in step) return { reply: { ...step.reply, ...(step.reply.tool_calls !== undefined ? { tool_calls: step.reply.tool_calls.map((c) => ({ ...c, arguments: unquoted(c.arguments) as never })) } : {}) } };
      return step;
    }
    if (!isAgentRequest(req)) return { reply: { content: 'Summary: the agent is fixing the orders build; it ran commands and read their warnings.' } };
    if (commands >= steps) return { reply: { content: `Done: ran ${commands} commands, the build of packages/orders passes.` } };
    commands++;
    return { reply: { tool_calls: [{ name: 'exec_command', arguments: { cmd: `npm run build --workspace packages/orders -- --step ${commands}` } }] } };
  };
}

/** Runs the loop in `api` until the model answers without a call; returns how many tool steps the agent ran. */
export async function runToolLoop(api: ProviderApi, baseURL: string, apiKey: string, model: string): Promise<{ steps: number; final: string }> {
  switch (api) {
    case 'openai-chat': {
      const sdk = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });
      const tools = TOOLS.map((t) => ({ type: 'function' as const, function: t }));
      const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: PROMPT }];
      for (let step = 0; ; step++) {
        const message = (await sdk.chat.completions.create({ model, messages: history, tools })).choices[0]?.message;
        const call = message?.tool_calls?.[0];
        if (message === undefined || call === undefined) return { steps: step, final: message?.content ?? '' };
        history.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls ?? [] });
        history.push({ role: 'tool', tool_call_id: call.id, content: commandOutput(step + 1) });
      }
    }
    case 'openai-responses': {
      const sdk = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });
      const tools = TOOLS.map((t) => ({ type: 'function', ...t }));
      const input: Item[] = [{ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: PROMPT }] }];
      for (let step = 0; ; step++) {
        const response = await sdk.responses.create({ model, input, tools, store: false } as never);
        const output = (response as unknown as { output: Item[]; output_text: string }).output;
        input.push(...output);
        const call = output.find((o) => o['type'] === 'function_call');
        if (call === undefined) return { steps: step, final: (response as unknown as { output_text: string }).output_text };
        input.push({ type: 'function_call_output', call_id: call['call_id'], output: commandOutput(step + 1) });
      }
    }
    case 'anthropic-messages': {
      const sdk = new Anthropic({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });
      const tools = TOOLS.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters as never }));
      const messages: Item[] = [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }];
      for (let step = 0; ; step++) {
        const message = await sdk.messages.create({ model, max_tokens: 4096, system: 'You are a coding agent.', messages: messages as never, tools });
        const content = message.content as unknown as Item[];
        messages.push({ role: 'assistant', content });
        const use = content.find((b) => b['type'] === 'tool_use');
        if (use === undefined) return { steps: step, final: content.map((b) => (typeof b['text'] === 'string' ? b['text'] : '')).join('') };
        messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use['id'], content: commandOutput(step + 1) }] });
      }
    }
  }
}

/** Text only Baton's boundary message holds (the seam of a rendered context, the header of a compaction). */
const BOUNDARY = /This session continues from an earlier conversation|The earlier part of this conversation was compacted/;

/** What the provider reported for one answered request, in any API (null for an error). */
export function reportedPrompt(exchange: Exchange): number | null {
  if (exchange.status !== 200) return null;
  const body = JSON.parse(Buffer.concat(exchange.chunks).toString('utf8')) as { usage?: Record<string, number | undefined> };
  const u = body.usage ?? {};
  return u['prompt_tokens'] ?? (u['cache_read_input_tokens'] !== undefined ? (u['input_tokens'] ?? 0) + (u['cache_creation_input_tokens'] ?? 0) + u['cache_read_input_tokens'] : (u['input_tokens'] ?? null));
}

/** The agent's requests as the provider got them, from the first one Baton rewrote onto its boundary. */
export interface AfterRewrite {
  /** How many requests the agent sent upstream in all (writers' and summaries' requests are not the agent's). */
  readonly agentRequests: number;
  /** Index of the first rewritten request among the agent's (-1: none was rewritten). */
  readonly first: number;
  /** From the first rewritten request on: the upstream's status and what it reported as the prompt (null: an error). */
  readonly statuses: readonly (number | null)[];
  readonly reported: readonly (number | null)[];
}

export function afterRewrite(exchanges: readonly Exchange[]): AfterRewrite {
  const agent = exchanges.filter((e) => e.body.includes('"exec_command"') && !e.body.includes('CHECKPOINT_PATH = '));
  const first = agent.findIndex((e) => BOUNDARY.test(e.body.toString('utf8')));
  const after = first < 0 ? [] : agent.slice(first);
  return { agentRequests: agent.length, first, statuses: after.map((e) => e.status), reported: after.map(reportedPrompt) };
}
