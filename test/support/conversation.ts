import { type Message } from '@baton/protocol';

/** The agent's tools for fork-mode tests: its own names and argument names, mapped by `writer_tools`. */
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

export const WRITER_TOOLS = {
  read: { name: 'read_file', args: { path: 'file_path' } },
  write: { name: 'write_file', args: { path: 'file_path', content: 'text' } },
};

export const SYSTEM_PROMPT = 'You are a careful coding agent working in a TypeScript repository.';

/** 64 000-token model with 8 000 output tokens: usable window 48 000, rungs 9 600 / 19 200 / 28 800 / 35 000 (clamped). */
export const MODEL = { id: 'gpt-4o', context_window: 64_000, max_output_tokens: 8_000 };

/** Small tail so a short test conversation leaves something for the writer to cover. */
export const TEST_TAIL = { minTokens: 60, maxTokens: 400, minTextMessages: 2 };

/**
 * A realistic coding conversation of `turns` turns (user → assistant tool call → tool result → assistant answer),
 * whose provider usage climbs by `step` tokens per turn starting at `start`.
 */
export function conversation(turns: number, options: { prefix?: string; start?: number; step?: number } = {}): Message[] {
  const p = options.prefix ?? 'm';
  let usage = options.start ?? 2_000;
  const step = options.step ?? 2_500;
  const out: Message[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ id: `${p}${i}u`, role: 'user', content: `Fix the failing test ${i} in src/orders/service-${i}.ts and keep the API on port 8080.` });
    out.push({
      id: `${p}${i}a`,
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `${p}${i}c`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ file_path: `src/orders/service-${i}.ts` }) } }],
      finish_reason: 'tool_calls',
      usage: { prompt_tokens: usage, completion_tokens: 40 },
    });
    out.push({
      id: `${p}${i}t`,
      role: 'tool',
      tool_call_id: `${p}${i}c`,
      content: i % 3 === 1 ? `Error: Cannot find module './db-${i}' imported from src/orders/service-${i}.ts` : `export function total${i}(items: number[]) { return items.reduce((a, b) => a + b, 0); }`,
    });
    out.push({
      id: `${p}${i}b`,
      role: 'assistant',
      content: `I fixed service-${i}: the import path was wrong because the module moved to src/db. We decided to keep the reducer.`,
      finish_reason: 'stop',
      usage: { prompt_tokens: usage + 300, completion_tokens: 60 },
    });
    usage += step;
  }
  return out;
}
