/**
 * Validation findings and the decision they lead to: over-budget files are sent back
 * for an extraction first, structural errors for a reflection next, warnings are only logged.
 */

/**
 * How serious a finding is:
 * - `extract-required` — a file or section is over its token budget; the writer is asked to move a topic into a
 *   spillover file. Alone after the last re-entry, the draft still commits (with a warning).
 * - `error` — the structure is broken; the writer gets a reflection, and a draft still in error after the last
 *   re-entry is not committed.
 * - `warn` — worth logging, never a re-entry.
 */
export type ViolationSeverity = 'extract-required' | 'error' | 'warn';

/**
 * Stable rule ids. Rules of one file only carry its prefix (`checkpoint-`, `memory-`); the others apply to every
 * writer-owned file and the violation's `file` tells which.
 */
export type ViolationRule =
  // checkpoint.md structure
  | 'checkpoint-missing'
  | 'checkpoint-title'
  | 'checkpoint-title-italic'
  | 'checkpoint-section-missing'
  | 'checkpoint-section-order'
  | 'checkpoint-section-duplicate'
  | 'checkpoint-section-unexpected'
  | 'checkpoint-italic-line'
  | 'checkpoint-intent-unquoted'
  // MEMORY.md structure and entries
  | 'memory-missing'
  | 'memory-title'
  | 'memory-title-italic'
  | 'memory-section-missing'
  | 'memory-section-order'
  | 'memory-section-duplicate'
  | 'memory-section-unexpected'
  | 'memory-italic-line'
  | 'memory-entry-missing-why'
  | 'memory-entry-missing-how-to-apply'
  | 'memory-duplicate-title'
  // index lines and spillovers (both files)
  | 'index-line-malformed'
  | 'index-line-bad-name'
  | 'index-line-topic-too-long'
  | 'index-line-missing-spillover'
  | 'nested-spillover'
  // budgets (both files)
  | 'budget-exceeded'
  | 'section-budget-exceeded';

/** One finding of the validator. */
export interface Violation {
  /** Absolute path of the file concerned. */
  readonly file: string;
  readonly rule: ViolationRule;
  readonly severity: ViolationSeverity;
  /** One sentence for the writer: what is wrong and, where it helps, what to do. */
  readonly detail: string;
}

/** What to do after a validation pass. */
export type ValidationDecision =
  /** Nothing blocks: commit (the warnings are for the log). */
  | { readonly kind: 'accept'; readonly warnings: Violation[] }
  /** Over budget: re-enter with the extraction reflection built from `violations` (extract-required only). */
  | { readonly kind: 'extract'; readonly violations: Violation[]; readonly warnings: Violation[] }
  /** Broken structure: re-enter with the validation reflection built from `violations` (errors only). */
  | { readonly kind: 'reflect'; readonly violations: Violation[]; readonly warnings: Violation[] };

/**
 * Decides the next step: any `extract-required` wins and the reflection is built from those alone
 * (errors wait for the next pass, since an extraction rewrites the same sections); otherwise any `error` leads to a
 * reflection built from the errors; warnings alone accept.
 */
export function decideValidation(violations: readonly Violation[]): ValidationDecision {
  const warnings = violations.filter((v) => v.severity === 'warn');
  const extract = violations.filter((v) => v.severity === 'extract-required');
  if (extract.length > 0) return { kind: 'extract', violations: extract, warnings };
  const errors = violations.filter((v) => v.severity === 'error');
  if (errors.length > 0) return { kind: 'reflect', violations: errors, warnings };
  return { kind: 'accept', warnings };
}
