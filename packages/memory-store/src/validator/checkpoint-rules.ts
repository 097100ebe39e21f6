import path from 'node:path';
import { checkBudgets } from './budget-rules.ts';
import type { Budgets, CheckpointBudgetKey } from './budgets.ts';
import { CHECKPOINT_SECTIONS, parseSections, type ParsedSection } from '../templates/checkpoint-sections.ts';
import { checkIndexAndSpillovers } from './index-lines.ts';
import { checkStructure } from './structure-rules.ts';
import type { TokenCounter } from '../tokens/token-counter.ts';
import type { Violation } from './violation.ts';

/** What {@link checkCheckpoint} needs. */
export interface CheckpointCheckInput {
  /** Absolute path of checkpoint.md (violations name it). */
  readonly file: string;
  /** The file's text, or null when it does not exist. */
  readonly text: string | null;
  /** The current checkpoint template (`prompts/checkpoint-template.md`). */
  readonly template: string;
  /** Whether the session has at least one user request, so §1 must quote one. */
  readonly userRequestExists: boolean;
  /** Whether a spillover of this name exists beside checkpoint.md. */
  readonly spilloverExists: (fileName: string) => boolean;
  /** The text of an existing spillover beside checkpoint.md, to check it has none of its own; optional. */
  readonly readSpillover?: ((fileName: string) => string | null) | undefined;
  readonly budgets: Budgets;
  readonly counter: TokenCounter;
}

// A `>` block-quoted line with some content (`>` alone is an empty quote).
const QUOTE_LINE = /^ {0,3}>\s*\S/m;

/**
 * The rules of checkpoint.md against the current template (never the legacy `Topic:` / `###`
 * shape): present and non-empty; structure (title line and its italic line, the 11 `## §N` headers once
 * and in order, italic lines unchanged); §1 quotes the user once a request exists; index lines well formed and
 * pointing at existing `checkpoint-<topic>.md` spillovers that have no index lines of their own; budgets.
 */
export function checkCheckpoint(input: CheckpointCheckInput): Violation[] {
  const { file, text } = input;
  const name = path.basename(file);
  if (text === null || text.trim() === '') {
    return [
      {
        file,
        rule: 'checkpoint-missing',
        severity: 'error',
        detail: `${name} ${text === null ? 'does not exist' : 'is empty'} after the writer finished; write the whole checkpoint from the template, filling every section`,
      },
    ];
  }
  const violations = checkStructure('checkpoint', file, text, input.template);
  const sections = parseSections(text);

  // §1 is the template's first section; a missing §1 is already a structure violation.
  const intentHeader = parseSections(input.template)[0]?.header ?? CHECKPOINT_SECTIONS[0]?.header;
  const intent = sections.find((section) => section.header === intentHeader);
  if (input.userRequestExists && intent !== undefined && !QUOTE_LINE.test(intent.body)) {
    violations.push({
      file,
      rule: 'checkpoint-intent-unquoted',
      severity: 'error',
      detail: `${name}: ${intent.header} has no block quote; quote the user's latest explicit request word for word on a line starting with "> "`,
    });
  }

  violations.push(...checkIndexAndSpillovers(file, text, 'checkpoint', input.spilloverExists, input.readSpillover));

  violations.push(
    ...checkBudgets({
      file,
      text,
      sections,
      budget: input.budgets.checkpoint,
      keyOf: checkpointBudgetKey,
      counter: input.counter,
    }),
  );
  return violations;
}

/** `§N` of a `## §N …` header, when it names one of the 11 sections. */
export function checkpointBudgetKey(section: ParsedSection): CheckpointBudgetKey | undefined {
  const key = /^(§\d{1,2})(?:\s|$)/.exec(section.title)?.[1];
  return CHECKPOINT_SECTIONS.some((spec) => `§${spec.number}` === key) ? (key as CheckpointBudgetKey) : undefined;
}
