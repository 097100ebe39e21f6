import { readFileSync } from 'node:fs';
import { MemoryStoreError } from '../memory-errors.ts';

/**
 * The prompt texts Baton ships, one file each (`<name>.md`) under this package's `prompts/` directory; the
 * repository's top-level `prompts/` is a link to it.
 * Prompts are versioned text, never inlined in logic; this registry is the only code that reads them.
 */
export const PROMPT_NAMES = [
  'checkpoint-template',
  'memory-template',
  'notes-template',
  'writer-task',
  'writer-reminder',
  'tool-not-permitted',
  'validation-reflection',
  'extraction-required',
  'subagent-progress',
  'rebuild-header',
  'rebuild-header-inline',
  'rebuild-seam',
  'rebuild-tail-tool-calls',
  'rebuild-tail-stop',
  'rebuild-tail-tool',
  'rebuild-index',
  'rebuild-index-empty',
  'rebuild-index-inline',
  'rebuild-recent-user-elided',
  'rebuild-uncovered',
  'fit-labels',
  'writer-guidance',
  'writer-user-requests',
  'writer-inherited',
  'rebuild-labels',
  'extractive-summary-header',
  'extractive-summary-labels',
  'tool-result-cleared',
  'compaction-system',
  'compaction-header',
  'writer-system',
  'handoff-header',
  'handoff-labels',
  'handoff-seam',
] as const;

/** Name of a registered prompt. */
export type PromptName = (typeof PROMPT_NAMES)[number];

// `src/templates/` → the package root, whose `prompts/` holds the texts. Resolved from this module so it works from
// any cwd, inside worker threads and from an installed copy of the package.
const PROMPTS_DIR = new URL('../../prompts/', import.meta.url);

const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]*)\}\}/g;

// Prompt files are read once per process: they are small and do not change while Baton runs.
const cache = new Map<PromptName, string>();

/**
 * Returns the text of a prompt file exactly as stored (placeholders left in place), reading it once and caching
 * it for the life of the process.
 *
 * @throws MemoryStoreError `unknown_prompt` when `name` is not in {@link PROMPT_NAMES}; the underlying fs error
 *   when the file is missing from the installation.
 */
export function loadPrompt(name: PromptName): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  if (!(PROMPT_NAMES as readonly string[]).includes(name)) {
    throw new MemoryStoreError(
      'unknown_prompt',
      `Unknown prompt ${JSON.stringify(name)}; registered prompts: ${PROMPT_NAMES.join(', ')}`,
      { name },
    );
  }
  const text = readFileSync(new URL(`${name}.md`, PROMPTS_DIR), 'utf8');
  cache.set(name, text);
  return text;
}

/**
 * The distinct `{{NAME}}` placeholders a prompt uses, in order of first appearance.
 *
 * @throws MemoryStoreError `unknown_prompt` as {@link loadPrompt}.
 */
export function promptPlaceholders(name: PromptName): string[] {
  const names = new Set<string>();
  for (const match of loadPrompt(name).matchAll(PLACEHOLDER)) names.add(match[1] ?? '');
  return [...names];
}

/**
 * Renders a prompt: every `{{NAME}}` is replaced by `vars[NAME]` in a single pass, so text inside a value is never
 * expanded again (a task tree or a user quote may itself contain braces). Extra vars are ignored.
 *
 * @throws MemoryStoreError `missing_prompt_var` naming every placeholder without a value;
 *   `unknown_prompt` as {@link loadPrompt}.
 */
export function renderPrompt(name: PromptName, vars: Readonly<Record<string, string>>): string {
  const text = loadPrompt(name);
  const missing = promptPlaceholders(name).filter((key) => !Object.hasOwn(vars, key));
  if (missing.length > 0) {
    throw new MemoryStoreError(
      'missing_prompt_var',
      `Prompt ${JSON.stringify(name)} needs a value for ${missing.map((key) => `{{${key}}}`).join(', ')}`,
      { name, missing },
    );
  }
  return text.replace(PLACEHOLDER, (_match, key: string) => vars[key] ?? '');
}
