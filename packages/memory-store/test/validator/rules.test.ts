import { describe, expect, it } from 'vitest';
import { parseSections } from '../../src/templates/checkpoint-sections.ts';
import { DEFAULT_BUDGETS, type Budgets } from '../../src/validator/budgets.ts';
import { validateMemoryFiles, type ValidateMemoryFilesInput } from '../../src/validator/validator.ts';
import { decideValidation, type ViolationRule, type ViolationSeverity } from '../../src/validator/violation.ts';
import {
  CHECKPOINT_BODIES,
  CHECKPOINT_PATH,
  MEMORY_BODIES,
  MEMORY_PATH,
  counter,
  filledCheckpoint,
  filledMemory,
  memoryTemplate,
  template,
  validInput,
} from './fixtures.ts';

/** The text of the section with this header (header to next header), or throws. */
function section(markdown: string, header: string, occurrence = 0): string {
  const found = parseSections(markdown).filter((s) => s.header === header)[occurrence];
  if (found === undefined) throw new Error(`no section ${header}`);
  return markdown.slice(found.start, found.end);
}

function without(markdown: string, header: string): string {
  return markdown.replace(section(markdown, header), '');
}

function swap(markdown: string, a: string, b: string): string {
  const textA = section(markdown, a);
  const textB = section(markdown, b);
  return markdown.replace(textA, '\u0000A').replace(textB, textA).replace('\u0000A', textB);
}

/** A filler of about `words` tokens that triggers no rule. */
function filler(words: number): string {
  return Array.from({ length: words }, (_, i) => ['orders', 'carts', 'postgres', 'retry'][i % 4]).join(' ');
}

const LONG_TOPIC = 'a'.repeat(81);

// Budgets whose sections each equal their section's tokens in `markdown` and whose total is one below the file's:
// only the whole-file rule can fire.
function totalOnlyBudgets(file: 'checkpoint' | 'memory', markdown: string): Budgets {
  const sections = parseSections(markdown);
  const sized = Object.fromEntries(
    sections.map((s) => [file === 'checkpoint' ? (s.title.split(' ')[0] ?? '') : s.title, counter.count(markdown.slice(s.start, s.end))]),
  );
  const total = counter.count(markdown) - 1;
  return { ...DEFAULT_BUDGETS, [file]: { total, sections: sized } };
}

interface RuleCase {
  readonly rule: ViolationRule;
  readonly severity: ViolationSeverity;
  readonly file: string;
  readonly why: string;
  readonly input: () => Partial<ValidateMemoryFilesInput>;
}

const cp = CHECKPOINT_PATH;
const mp = MEMORY_PATH;

const CASES: readonly RuleCase[] = [
  // checkpoint.md
  { rule: 'checkpoint-missing', severity: 'error', file: cp, why: 'no checkpoint file', input: () => ({ checkpoint: null }) },
  { rule: 'checkpoint-missing', severity: 'error', file: cp, why: 'an empty checkpoint', input: () => ({ checkpoint: ' \n\n' }) },
  {
    rule: 'checkpoint-title', severity: 'error', file: cp, why: 'the legacy title line',
    input: () => ({ checkpoint: filledCheckpoint().replace('# Session checkpoint', '# Checkpoint #3') }),
  },
  {
    rule: 'checkpoint-title-italic', severity: 'error', file: cp, why: 'the italic line under the title reworded',
    input: () => ({ checkpoint: filledCheckpoint().replace("_Maintained by Baton's checkpoint writer.", '_Written by the writer.') }),
  },
  {
    rule: 'checkpoint-section-missing', severity: 'error', file: cp, why: '§11 removed',
    input: () => ({ checkpoint: without(filledCheckpoint(), '## §11 Open notes') }),
  },
  {
    rule: 'checkpoint-section-order', severity: 'error', file: cp, why: '§2 and §3 swapped',
    input: () => ({ checkpoint: swap(filledCheckpoint(), '## §2 Next concrete action', '## §3 Directives (this session)') }),
  },
  {
    rule: 'checkpoint-section-duplicate', severity: 'error', file: cp, why: '§11 written twice',
    input: () => {
      const text = filledCheckpoint();
      return { checkpoint: `${text}\n${section(text, '## §11 Open notes')}` };
    },
  },
  {
    rule: 'checkpoint-section-unexpected', severity: 'error', file: cp, why: 'a header the template does not have',
    input: () => ({ checkpoint: `${filledCheckpoint()}\n## Extra notes\n\n- a note\n` }),
  },
  {
    rule: 'checkpoint-italic-line', severity: 'error', file: cp, why: 'the §4 instruction reworded',
    input: () => ({ checkpoint: filledCheckpoint().replace('_The task list as reported by the task tool', '_The tasks') }),
  },
  {
    rule: 'checkpoint-intent-unquoted', severity: 'error', file: cp, why: '§1 paraphrases instead of quoting',
    input: () => ({ checkpoint: filledCheckpoint({ '## §1 Active intent': 'The user wants the 500 on POST /orders fixed.' }) }),
  },
  {
    rule: 'index-line-malformed', severity: 'error', file: cp, why: 'an index line without its summary',
    input: () => ({ checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See checkpoint-nats-debugging.md (4 items)' }) }),
  },
  {
    rule: 'index-line-malformed', severity: 'error', file: cp, why: 'a spillover named in backticks, not an index line',
    input: () => ({ checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See `checkpoint-nats-debugging.md` for the details' }) }),
  },
  {
    rule: 'index-line-bad-name', severity: 'error', file: cp, why: 'an index line pointing at notes-*.md',
    input: () => ({ checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See notes-ports.md (2 items) — ports' }) }),
  },
  {
    rule: 'index-line-bad-name', severity: 'error', file: cp, why: 'a memory spillover referenced from the checkpoint',
    input: () => ({ checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See MEMORY-lmdb-tuning.md (3 items) — LMDB' }) }),
  },
  {
    rule: 'index-line-bad-name', severity: 'error', file: cp, why: 'a path instead of a bare file name',
    input: () => ({ checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See sessions/ses_01/checkpoint-nats-debugging.md (4 items) — NATS' }) }),
  },
  {
    rule: 'index-line-topic-too-long', severity: 'error', file: cp, why: 'an 81-character topic',
    input: () => ({
      checkpoint: filledCheckpoint({ '## §8 Errors and fixes': `- See checkpoint-${LONG_TOPIC}.md (2 items) — long` }),
      spilloverExists: () => true,
    }),
  },
  {
    rule: 'index-line-missing-spillover', severity: 'error', file: cp, why: 'a spillover that was never written',
    input: () => ({ checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See checkpoint-gone.md (2 items) — gone' }) }),
  },
  {
    rule: 'nested-spillover', severity: 'error', file: '/data/memory/sessions/ses_01/checkpoint-nats-debugging.md',
    why: 'a spillover with an index line of its own',
    input: () => ({
      readSpillover: (name) => (name === 'checkpoint-nats-debugging.md' ? '# NATS\n\n- See checkpoint-more.md (2 items) — more\n' : null),
    }),
  },
  {
    rule: 'section-budget-exceeded', severity: 'extract-required', file: cp, why: '§5 at about 1 700 tokens',
    input: () => ({ checkpoint: filledCheckpoint({ '## §5 Current work': `${CHECKPOINT_BODIES['## §5 Current work']}\n${filler(1_600)}` }) }),
  },
  {
    rule: 'budget-exceeded', severity: 'extract-required', file: cp, why: 'the whole file one token over its total',
    input: () => ({ budgets: totalOnlyBudgets('checkpoint', filledCheckpoint()) }),
  },
  // MEMORY.md
  { rule: 'memory-missing', severity: 'error', file: mp, why: 'no MEMORY.md', input: () => ({ memory: null }) },
  {
    rule: 'memory-title', severity: 'error', file: mp, why: 'the title line changed',
    input: () => ({ memory: filledMemory().replace('# Project memory', '# Memory') }),
  },
  {
    rule: 'memory-title-italic', severity: 'error', file: mp, why: 'the italic line under the title removed',
    input: () => ({ memory: filledMemory().replace(/^_Durable knowledge.*\n/m, '') }),
  },
  {
    rule: 'memory-section-missing', severity: 'error', file: mp, why: 'Architecture decisions removed',
    input: () => ({ memory: without(filledMemory(), '## Architecture decisions') }),
  },
  {
    rule: 'memory-section-order', severity: 'error', file: mp, why: 'Rules and Architecture decisions swapped',
    input: () => ({ memory: swap(filledMemory(), '## Rules', '## Architecture decisions') }),
  },
  {
    rule: 'memory-section-duplicate', severity: 'error', file: mp, why: 'Rules written twice',
    input: () => {
      const text = filledMemory();
      return { memory: `${text}\n${section(text, '## Rules')}` };
    },
  },
  {
    rule: 'memory-section-unexpected', severity: 'error', file: mp, why: 'a header the template does not have',
    input: () => ({ memory: `${filledMemory()}\n## Misc\n\n- a note\n` }),
  },
  {
    rule: 'memory-italic-line', severity: 'error', file: mp, why: 'the Rules instruction reworded',
    input: () => ({ memory: filledMemory().replace('_Hard constraints the user set', '_Constraints') }),
  },
  {
    rule: 'memory-entry-missing-why', severity: 'warn', file: mp, why: 'a new entry without Why:',
    input: () => ({
      memory: filledMemory({
        '## Discovered durable knowledge': `${MEMORY_BODIES['## Discovered durable knowledge']}\n- **Dev port**: the dev server listens on 8081.\n  How to apply: use 8081 in curl examples.`,
      }),
    }),
  },
  {
    rule: 'memory-entry-missing-how-to-apply', severity: 'warn', file: mp, why: 'a new entry without How to apply:',
    input: () => ({
      memory: filledMemory({
        '## Discovered durable knowledge': `${MEMORY_BODIES['## Discovered durable knowledge']}\n- **Dev port**: the dev server listens on 8081.\n  Why: the port is a project rule.`,
      }),
    }),
  },
  {
    rule: 'memory-duplicate-title', severity: 'error', file: mp, why: 'a second entry with an existing title',
    input: () => ({
      memory: filledMemory({
        '## Discovered durable knowledge': `${MEMORY_BODIES['## Discovered durable knowledge']}\n- **Legacy carts have no items**: again.\n  Why: x.\n  How to apply: y.`,
      }),
    }),
  },
  {
    rule: 'index-line-missing-spillover', severity: 'error', file: mp, why: 'a memory spillover that was never written',
    input: () => ({
      memory: filledMemory({ '## Rules': `${MEMORY_BODIES['## Rules']}\n- See MEMORY-ports.md (2 entries) - ports of every service` }),
    }),
  },
  {
    rule: 'index-line-bad-name', severity: 'error', file: mp, why: 'a checkpoint spillover referenced from MEMORY.md',
    input: () => ({
      memory: filledMemory({ '## Rules': `${MEMORY_BODIES['## Rules']}\n- See checkpoint-nats-debugging.md (4 items) — NATS` }),
    }),
  },
  {
    rule: 'nested-spillover', severity: 'error', file: '/data/memory/projects/prj_orders/MEMORY-lmdb-tuning.md',
    why: 'a memory spillover with an index line of its own',
    input: () => ({
      readSpillover: (name) => (name === 'MEMORY-lmdb-tuning.md' ? '# LMDB\n\n- See MEMORY-more.md (2 entries) - more\n' : null),
    }),
  },
  {
    rule: 'section-budget-exceeded', severity: 'extract-required', file: mp, why: 'Rules at about 2 100 tokens',
    input: () => ({ memory: filledMemory({ '## Rules': `${MEMORY_BODIES['## Rules']}\n${filler(2_100)}` }) }),
  },
  {
    rule: 'budget-exceeded', severity: 'extract-required', file: mp, why: 'the whole file one token over its total',
    input: () => ({ budgets: totalOnlyBudgets('memory', filledMemory()) }),
  },
];

describe('validateMemoryFiles', () => {
  it('accepts a checkpoint and a MEMORY.md filled exactly as the templates ask, on the first check', () => {
    const violations = validateMemoryFiles(validInput());
    expect(violations).toEqual([]);
    expect(decideValidation(violations)).toEqual({ kind: 'accept', warnings: [] });
  });

  it('accepts the untouched templates before any user request (a first writer with nothing to record)', () => {
    expect(
      validateMemoryFiles(validInput({ checkpoint: template, memory: memoryTemplate, previousMemory: null, userRequestExists: false })),
    ).toEqual([]);
  });

  it('never asks for the legacy Topic: line or ### sub-sections', () => {
    const details = validateMemoryFiles(validInput({ checkpoint: template, userRequestExists: true })).map((v) => v.detail);
    expect(details.join('\n')).not.toMatch(/Topic:|### (Execution context|Live resources|Session metadata|Discovered|Dead ends)/);
  });

  it.each(CASES.map((c) => [c.rule, c.why, c] as const))('%s fires alone on %s', (_rule, _why, c) => {
    const violations = validateMemoryFiles(validInput(c.input()));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ rule: c.rule, severity: c.severity, file: c.file });
    expect(violations[0]?.detail).not.toBe('');
  });

  it('covers every rule id in the table', () => {
    const rules: readonly ViolationRule[] = [
      'checkpoint-missing', 'checkpoint-title', 'checkpoint-title-italic', 'checkpoint-section-missing',
      'checkpoint-section-order', 'checkpoint-section-duplicate', 'checkpoint-section-unexpected', 'checkpoint-italic-line',
      'checkpoint-intent-unquoted', 'memory-missing', 'memory-title', 'memory-title-italic', 'memory-section-missing',
      'memory-section-order', 'memory-section-duplicate', 'memory-section-unexpected', 'memory-italic-line',
      'memory-entry-missing-why', 'memory-entry-missing-how-to-apply', 'memory-duplicate-title', 'index-line-malformed',
      'index-line-bad-name', 'index-line-topic-too-long', 'index-line-missing-spillover', 'nested-spillover',
      'budget-exceeded', 'section-budget-exceeded',
    ];
    expect(new Set(CASES.map((c) => c.rule))).toEqual(new Set(rules));
  });

  it('does not require a §1 quote before the session has a user request', () => {
    const checkpoint = filledCheckpoint({ '## §1 Active intent': '(none yet)' });
    expect(validateMemoryFiles(validInput({ checkpoint, userRequestExists: false }))).toEqual([]);
    expect(validateMemoryFiles(validInput({ checkpoint, userRequestExists: true })).map((v) => v.rule)).toEqual([
      'checkpoint-intent-unquoted',
    ]);
  });

  it('reports a missing checkpoint alone, without structure noise', () => {
    expect(validateMemoryFiles(validInput({ checkpoint: null })).map((v) => v.rule)).toEqual(['checkpoint-missing']);
  });

  it('checks spillover existence with the bare file name and only for valid names', () => {
    const asked: string[] = [];
    validateMemoryFiles(
      validInput({
        checkpoint: filledCheckpoint({ '## §8 Errors and fixes': '- See checkpoint-nats-debugging.md (4 items) — NATS\n- See x/y.md (1 items) — bad' }),
        spilloverExists: (name) => {
          asked.push(name);
          return true;
        },
      }),
    );
    expect(asked).toEqual(['checkpoint-nats-debugging.md', 'MEMORY-lmdb-tuning.md']);
  });
});

describe('decideValidation', () => {
  it('lets extract-required win over errors and builds the reflection from the over-budget findings only', () => {
    const checkpoint = filledCheckpoint({
      '## §1 Active intent': 'paraphrase, no quote',
      '## §5 Current work': `${CHECKPOINT_BODIES['## §5 Current work']}\n${filler(1_600)}`,
    });
    const memory = filledMemory({
      '## Discovered durable knowledge': `${MEMORY_BODIES['## Discovered durable knowledge']}\n- **No why**: text.\n  How to apply: z.`,
    });
    const violations = validateMemoryFiles(validInput({ checkpoint, memory }));
    expect(new Set(violations.map((v) => v.severity))).toEqual(new Set(['error', 'extract-required', 'warn']));
    const decision = decideValidation(violations);
    expect(decision.kind).toBe('extract');
    if (decision.kind !== 'extract') return;
    expect(decision.violations.map((v) => v.rule)).toEqual(['section-budget-exceeded']);
    expect(decision.warnings.map((v) => v.rule)).toEqual(['memory-entry-missing-why']);
  });

  it('reflects on errors when nothing is over budget, dropping warnings from the reflection', () => {
    const decision = decideValidation([
      { file: cp, rule: 'checkpoint-title', severity: 'error', detail: 'a' },
      { file: mp, rule: 'memory-entry-missing-why', severity: 'warn', detail: 'b' },
    ]);
    expect(decision).toEqual({
      kind: 'reflect',
      violations: [{ file: cp, rule: 'checkpoint-title', severity: 'error', detail: 'a' }],
      warnings: [{ file: mp, rule: 'memory-entry-missing-why', severity: 'warn', detail: 'b' }],
    });
  });

  it('accepts warnings alone', () => {
    const warn = { file: mp, rule: 'memory-entry-missing-why', severity: 'warn', detail: 'b' } as const;
    expect(decideValidation([warn])).toEqual({ kind: 'accept', warnings: [warn] });
    expect(decideValidation([])).toEqual({ kind: 'accept', warnings: [] });
  });
});
