import { describe, expect, it } from 'vitest';
import {
  decideValidation,
  renderExtractionReflection,
  renderValidationReflection,
  validateMemoryFiles,
  type Violation,
} from '../../src/index.ts';
import { CHECKPOINT_BODIES, CHECKPOINT_PATH, MEMORY_PATH, filledCheckpoint, validInput } from './fixtures.ts';

const paths = { checkpointPath: CHECKPOINT_PATH, memoryPath: MEMORY_PATH };

describe('renderValidationReflection', () => {
  it('groups details per file in first-seen order and ends with the absolute paths', () => {
    const violations: Violation[] = [
      { file: MEMORY_PATH, rule: 'memory-title', severity: 'error', detail: 'MEMORY.md: the title changed' },
      { file: CHECKPOINT_PATH, rule: 'checkpoint-italic-line', severity: 'error', detail: 'checkpoint.md: §4 italic changed' },
      { file: MEMORY_PATH, rule: 'memory-section-missing', severity: 'error', detail: 'MEMORY.md: ## Rules is missing' },
    ];
    const text = renderValidationReflection(violations, paths);
    expect(text).toContain(
      [
        `${MEMORY_PATH}:`,
        '- MEMORY.md: the title changed',
        '- MEMORY.md: ## Rules is missing',
        '',
        `${CHECKPOINT_PATH}:`,
        '- checkpoint.md: §4 italic changed',
      ].join('\n'),
    );
    expect(text).toContain(`CHECKPOINT_PATH = ${CHECKPOINT_PATH}\nMEMORY_PATH = ${MEMORY_PATH}`);
    expect(text.startsWith('<system-reminder>')).toBe(true);
    expect(text.trimEnd().endsWith('</system-reminder>')).toBe(true);
    expect(text).not.toMatch(/\{\{/);
  });

  it('renders what the validator found for a broken checkpoint', () => {
    const checkpoint = filledCheckpoint({ '## §1 Active intent': 'no quote' }).replace('# Session checkpoint', '# Checkpoint');
    const decision = decideValidation(validateMemoryFiles(validInput({ checkpoint })));
    expect(decision.kind).toBe('reflect');
    if (decision.kind !== 'reflect') return;
    const text = renderValidationReflection(decision.violations, paths);
    expect(text).toContain(`${CHECKPOINT_PATH}:\n- checkpoint.md: title line: expected "# Session checkpoint", found "# Checkpoint"`);
    expect(text).toContain('has no block quote');
  });
});

describe('renderExtractionReflection', () => {
  it('names each over-budget file by absolute path with its details, and states the spillover rules', () => {
    const checkpoint = filledCheckpoint({
      '## §5 Current work': `${CHECKPOINT_BODIES['## §5 Current work']}\n${' orders'.repeat(1_600)}`,
    });
    const decision = decideValidation(validateMemoryFiles(validInput({ checkpoint })));
    expect(decision.kind).toBe('extract');
    if (decision.kind !== 'extract') return;
    const text = renderExtractionReflection(decision.violations);
    expect(text).toMatch(
      new RegExp(`^EXTRACTION REQUIRED: these files are over their token budget: ${CHECKPOINT_PATH} \\(section "## §5 Current work" is \\d+ tokens, over its 1500-token budget\\)\\n`),
    );
    expect(text).toContain('`checkpoint-<topic>.md`');
    expect(text).toContain('`MEMORY-<topic>.md`');
    expect(text).toContain('`- See <file> (N items) — <summary>`');
    expect(text).not.toMatch(/\{\{/);
  });

  it('joins the details of one file and separates files by commas', () => {
    const text = renderExtractionReflection([
      { file: CHECKPOINT_PATH, rule: 'budget-exceeded', severity: 'extract-required', detail: 'checkpoint.md is 11001 tokens' },
      { file: MEMORY_PATH, rule: 'section-budget-exceeded', severity: 'extract-required', detail: 'Rules is 2001 tokens' },
      { file: CHECKPOINT_PATH, rule: 'section-budget-exceeded', severity: 'extract-required', detail: '§5 is 1501 tokens' },
    ]);
    expect(text.split('\n')[0]).toBe(
      `EXTRACTION REQUIRED: these files are over their token budget: ${CHECKPOINT_PATH} (checkpoint.md is 11001 tokens; §5 is 1501 tokens), ${MEMORY_PATH} (Rules is 2001 tokens)`,
    );
  });
});
