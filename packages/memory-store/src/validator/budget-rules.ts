import path from 'node:path';
import type { ParsedSection } from '../templates/checkpoint-sections.ts';
import type { FileBudget } from './budgets.ts';
import type { TokenCounter } from '../tokens/token-counter.ts';
import type { Violation } from './violation.ts';

/**
 * Budget rules, in real tokens: the whole file against its total, and each `## ` section — from its
 * header to the next header, header and italic line included — against the budget of its key.
 *
 * The whole-file count is the sum of the counts of the text before the first header and of every section. That is
 * exact, not an estimate: every section starts at a line beginning with `#`, and both o200k_base and cl100k_base
 * split their pre-tokens at such a point (a run of newlines never merges with a following `#`), so the tokens of
 * the parts add up to the tokens of the whole. Counting by parts means an unchanged section is a cache hit even when
 * another section changed, which is what keeps repeated validation cheap.
 */
export function checkBudgets<Key extends string>(options: {
  readonly file: string;
  readonly text: string;
  readonly sections: readonly ParsedSection[];
  readonly budget: FileBudget<Key>;
  /** The budget key of a section, or undefined for a section without a budget. */
  readonly keyOf: (section: ParsedSection) => Key | undefined;
  readonly counter: TokenCounter;
}): Violation[] {
  const { file, text, sections, budget, keyOf, counter } = options;
  const violations: Violation[] = [];
  let total = counter.count(text.slice(0, sections[0]?.start ?? text.length));
  for (const section of sections) {
    const tokens = counter.count(text.slice(section.start, section.end));
    total += tokens;
    const key = keyOf(section);
    const limit = key === undefined ? undefined : budget.sections[key];
    if (limit !== undefined && tokens > limit) {
      violations.push({
        file,
        rule: 'section-budget-exceeded',
        severity: 'extract-required',
        detail: `section "${section.header}" is ${tokens} tokens, over its ${limit}-token budget`,
      });
    }
  }
  if (total > budget.total) {
    violations.unshift({
      file,
      rule: 'budget-exceeded',
      severity: 'extract-required',
      detail: `${path.basename(file)} is ${total} tokens, over its ${budget.total}-token budget`,
    });
  }
  return violations;
}
