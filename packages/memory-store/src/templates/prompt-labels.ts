import { MemoryStoreError } from '../memory-errors.ts';
import { type PromptName, loadPrompt } from './prompt-registry.ts';

/**
 * Short model-visible labels (section headings, status icons, one-line markers) kept together in one prompt file,
 * one `key: value` line each, so that they live in `prompts/` with the rest of the text the model sees.
 */

const LINE = /^([a-z][a-z0-9_]*): (.*)$/;
const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]*)\}\}/g;
const cache = new Map<PromptName, ReadonlyMap<string, string>>();

/**
 * The labels of prompt `name` for `keys`, parsed once per process. Blank lines are ignored; the value is the rest
 * of the line after `key: `.
 *
 * @throws MemoryStoreError `missing_prompt_var` when a requested key is absent from the file, or a non-blank line
 *   is not of the `key: value` form.
 */
export function loadPromptLabels<const K extends string>(
  name: PromptName,
  keys: readonly K[],
): Readonly<Record<K, string>> {
  let labels = cache.get(name);
  if (labels === undefined) {
    const parsed = new Map<string, string>();
    for (const line of loadPrompt(name).split('\n')) {
      if (line.trim() === '') continue;
      const match = LINE.exec(line);
      if (match === null) {
        throw new MemoryStoreError('missing_prompt_var', `Prompt ${JSON.stringify(name)}: not a "key: value" line: ${line}`, {
          name,
          line,
        });
      }
      parsed.set(match[1] ?? '', match[2] ?? '');
    }
    labels = parsed;
    cache.set(name, labels);
  }
  const missing = keys.filter((key) => !labels.has(key));
  if (missing.length > 0) {
    const message = `Prompt ${JSON.stringify(name)} lacks the label(s) ${missing.join(', ')}`;
    throw new MemoryStoreError('missing_prompt_var', message, { name, missing });
  }
  return Object.fromEntries(keys.map((key) => [key, labels.get(key) ?? ''])) as Record<K, string>;
}

/**
 * Replaces every `{{NAME}}` of a label by `vars[NAME]` in one pass (values are never expanded again); a placeholder
 * without a value is left as it is.
 */
export function fillLabel(label: string, vars: Readonly<Record<string, string>>): string {
  return label.replace(PLACEHOLDER, (match, key: string) => (Object.hasOwn(vars, key) ? (vars[key] ?? '') : match));
}
