/**
 * Context windows of common models, for sessions opened from a gateway request (the agent does not say). Matched on
 * the model id's start, longest first; configuration (`contextWindows`) and `--context-window` come before it.
 */
const WINDOWS: readonly (readonly [prefix: string, window: number])[] = [
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-4-turbo', 128_000],
  ['gpt-5', 400_000],
  ['o1', 200_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['claude-', 200_000],
  ['gemini-', 1_048_576],
  ['deepseek', 128_000],
  ['qwen', 131_072],
  ['llama', 128_000],
  ['mistral', 128_000],
];

const ORDERED = [...WINDOWS].sort((a, b) => b[0].length - a[0].length);

/** The context window of `model`: from `overrides` (exact id), else the table, else `fallback`. */
export function contextWindowOf(model: string, overrides: Readonly<Record<string, number>>, fallback: number): number {
  const exact = overrides[model];
  if (exact !== undefined) return exact;
  const id = model.toLowerCase().split('/').at(-1) ?? model.toLowerCase();
  return ORDERED.find(([prefix]) => id.startsWith(prefix))?.[1] ?? fallback;
}
