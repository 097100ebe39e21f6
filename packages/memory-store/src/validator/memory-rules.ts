import path from 'node:path';
import { checkBudgets } from './budget-rules.ts';
import { MEMORY_BUDGET_KEYS, type Budgets, type MemoryBudgetKey } from './budgets.ts';
import { parseSections, type ParsedSection } from '../templates/checkpoint-sections.ts';
import { checkIndexAndSpillovers } from './index-lines.ts';
import {
  DISCOVERED_SECTION_TITLE,
  hasHowToApply,
  hasWhy,
  parseDiscoveredEntries,
  type MemoryEntry,
} from './memory-entries.ts';
import { checkStructure } from './structure-rules.ts';
import type { TokenCounter } from '../tokens/token-counter.ts';
import type { Violation } from './violation.ts';

/** What {@link checkMemory} needs. */
export interface MemoryCheckInput {
  /** Absolute path of the project's MEMORY.md (violations name it). */
  readonly file: string;
  /** The file's text, or null when it does not exist. */
  readonly text: string | null;
  /** The last committed version, or null when there is none: the reference for duplicate titles. */
  readonly previous: string | null;
  /** The current MEMORY.md template (`prompts/memory-template.md`). */
  readonly template: string;
  /** Whether a spillover of this name exists beside MEMORY.md. */
  readonly spilloverExists: (fileName: string) => boolean;
  /** The text of an existing spillover beside MEMORY.md, to check it has none of its own; optional. */
  readonly readSpillover?: ((fileName: string) => string | null) | undefined;
  readonly budgets: Budgets;
  readonly counter: TokenCounter;
}

/**
 * The rules of MEMORY.md: present and non-empty; structure (title and its italic line, the 4 section
 * headers once and in order with their italic lines); every Discovered entry has `Why:` and `How to apply:`
 * (warnings); no duplicate title in the Discovered section (error, see {@link checkDuplicateTitles}); index lines
 * pointing at existing `MEMORY-<topic>.md` spillovers without index lines of their own; budgets.
 */
export function checkMemory(input: MemoryCheckInput): Violation[] {
  const { file, text } = input;
  const name = path.basename(file);
  if (text === null || text.trim() === '') {
    return [
      {
        file,
        rule: 'memory-missing',
        severity: 'error',
        detail: `${name} ${text === null ? 'does not exist' : 'is empty'}; restore it from the last version you read, keeping its four sections`,
      },
    ];
  }
  const violations = checkStructure('memory', file, text, input.template);

  const entries = parseDiscoveredEntries(text);
  for (const entry of entries) {
    if (!hasWhy(entry)) {
      violations.push({
        file,
        rule: 'memory-entry-missing-why',
        severity: 'warn',
        detail: `${name} line ${entry.line}: the entry "${entry.title}" has no "Why:" line`,
      });
    }
    if (!hasHowToApply(entry)) {
      violations.push({
        file,
        rule: 'memory-entry-missing-how-to-apply',
        severity: 'warn',
        detail: `${name} line ${entry.line}: the entry "${entry.title}" has no "How to apply:" line`,
      });
    }
  }
  violations.push(...checkDuplicateTitles(file, entries, input.previous === null ? [] : parseDiscoveredEntries(input.previous)));

  violations.push(...checkIndexAndSpillovers(file, text, 'memory', input.spilloverExists, input.readSpillover));

  violations.push(
    ...checkBudgets({
      file,
      text,
      sections: parseSections(text),
      budget: input.budgets.memory,
      keyOf: memoryBudgetKey,
      counter: input.counter,
    }),
  );
  return violations;
}

/**
 * Duplicate titles in the Discovered section. The writer is told to update an entry in place rather than add a
 * second one with the same title, so what counts is the number of entries per (normalised) title:
 * - an entry kept as it was, or edited in place, is one entry per title, as before — not a duplicate;
 * - a title now held by more entries than in the previous committed version (and by more than one) is a
 *   duplicate: a new entry collides with an existing one, or two new entries collide with each other;
 * - duplicates the previous version already had are not reported again (they are not this writer's doing).
 */
export function checkDuplicateTitles(
  file: string,
  entries: readonly MemoryEntry[],
  previous: readonly MemoryEntry[],
): Violation[] {
  const name = path.basename(file);
  const before = new Map<string, number>();
  for (const entry of previous) before.set(entry.key, (before.get(entry.key) ?? 0) + 1);
  const now = new Map<string, MemoryEntry[]>();
  for (const entry of entries) now.set(entry.key, [...(now.get(entry.key) ?? []), entry]);
  const violations: Violation[] = [];
  for (const [key, group] of now) {
    const had = before.get(key) ?? 0;
    if (group.length <= Math.max(1, had)) continue;
    const first = group[0] as MemoryEntry;
    const lines = group.map((entry) => entry.line).join(', ');
    violations.push({
      file,
      rule: 'memory-duplicate-title',
      severity: 'error',
      detail:
        had > 0
          ? `${name}: "## ${DISCOVERED_SECTION_TITLE}" already had an entry titled "${first.title}" and now has ${group.length} (lines ${lines}); update the existing entry in place and remove the new one`
          : `${name}: "## ${DISCOVERED_SECTION_TITLE}" has ${group.length} entries titled "${first.title}" (lines ${lines}); merge them into one entry`,
    });
  }
  return violations;
}

/** The budget key of a MEMORY.md section: its title, when it is one of the 4. */
export function memoryBudgetKey(section: ParsedSection): MemoryBudgetKey | undefined {
  return (MEMORY_BUDGET_KEYS as readonly string[]).includes(section.title) ? (section.title as MemoryBudgetKey) : undefined;
}
