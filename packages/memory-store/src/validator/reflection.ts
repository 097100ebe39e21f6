import { renderPrompt } from '../templates/prompt-registry.ts';
import type { Violation } from './violation.ts';

/**
 * The re-entry messages built from violations: the grouped validation reflection for
 * structural errors, and the EXTRACTION REQUIRED message for budget overruns. Texts live in `prompts/`.
 */

/** Absolute paths the validation reflection repeats, so the writer re-reads the right files. */
export interface ReflectionPaths {
  readonly checkpointPath: string;
  readonly memoryPath: string;
}

/**
 * `prompts/validation-reflection.md` with its details: per file, in the order files first appear in `violations`,
 * a `<file>:` line and one `- <detail>` bullet per violation, groups separated by a blank line; then the absolute
 * CHECKPOINT_PATH and MEMORY_PATH. Renders exactly the violations given — pass the `violations` of a `reflect`
 * decision (errors only).
 */
export function renderValidationReflection(violations: readonly Violation[], paths: ReflectionPaths): string {
  const details = groupByFile(violations)
    .map(([file, group]) => [`${file}:`, ...group.map((v) => `- ${v.detail}`)].join('\n'))
    .join('\n\n');
  return renderPrompt('validation-reflection', {
    DETAILS: details,
    CHECKPOINT_PATH: paths.checkpointPath,
    MEMORY_PATH: paths.memoryPath,
  });
}

/**
 * `prompts/extraction-required.md` naming each over-budget file by absolute path with what is over, as
 * `<file> (<detail>; <detail>)`, files in first-seen order and separated by commas; the prompt itself states the
 * spillover rules (names, index line, no nested spillover). Pass the `violations` of an `extract` decision.
 */
export function renderExtractionReflection(violations: readonly Violation[]): string {
  const files = groupByFile(violations)
    .map(([file, group]) => `${file} (${group.map((v) => v.detail).join('; ')})`)
    .join(', ');
  return renderPrompt('extraction-required', { FILES: files });
}

function groupByFile(violations: readonly Violation[]): [string, Violation[]][] {
  const groups = new Map<string, Violation[]>();
  for (const violation of violations) {
    const group = groups.get(violation.file);
    if (group === undefined) groups.set(violation.file, [violation]);
    else group.push(violation);
  }
  return [...groups];
}
