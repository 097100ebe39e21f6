import { describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import { CHECKPOINT_SECTIONS, parseSections } from '../../src/templates/checkpoint-sections.ts';
import { loadPrompt } from '../../src/templates/prompt-registry.ts';
import {
  BudgetConfigSchema,
  CHECKPOINT_BUDGET_KEYS,
  DEFAULT_BUDGETS,
  MEMORY_BUDGET_KEYS,
  renderBudgetTable,
  resolveBudgets,
} from '../../src/validator/budgets.ts';

const sum = (values: Readonly<Record<string, number>>): number => Object.values(values).reduce((a, b) => a + b, 0);

function refusal(config: unknown): MemoryStoreError {
  try {
    resolveBudgets(config);
  } catch (error) {
    if (error instanceof MemoryStoreError) return error;
    throw error;
  }
  throw new Error('expected resolveBudgets to refuse the configuration');
}

describe('DEFAULT_BUDGETS', () => {
  it('has the default values, with sections summing exactly to each total', () => {
    expect(DEFAULT_BUDGETS.checkpoint).toEqual({
      total: 11_000,
      sections: {
        '§1': 400, '§2': 700, '§3': 600, '§4': 800, '§5': 1_500, '§6': 1_100,
        '§7': 1_500, '§8': 1_100, '§9': 700, '§10': 2_000, '§11': 600,
      },
    });
    expect(DEFAULT_BUDGETS.memory).toEqual({
      total: 10_000,
      sections: { 'Project context': 1_000, Rules: 2_000, 'Architecture decisions': 3_000, 'Discovered durable knowledge': 4_000 },
    });
    expect(sum(DEFAULT_BUDGETS.checkpoint.sections)).toBe(11_000);
    expect(sum(DEFAULT_BUDGETS.memory.sections)).toBe(10_000);
  });

  it('has one key per template section', () => {
    expect(CHECKPOINT_BUDGET_KEYS).toEqual(CHECKPOINT_SECTIONS.map((s) => `§${s.number}`));
    expect(MEMORY_BUDGET_KEYS).toEqual(parseSections(loadPrompt('memory-template')).map((s) => s.title));
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(DEFAULT_BUDGETS.checkpoint.sections)).toBe(true);
  });
});

describe('resolveBudgets', () => {
  it('returns the defaults for no configuration', () => {
    expect(resolveBudgets()).toEqual(DEFAULT_BUDGETS);
    expect(resolveBudgets({})).toEqual(DEFAULT_BUDGETS);
  });

  it('merges partial overrides onto the defaults', () => {
    const budgets = resolveBudgets({ checkpoint: { total: 12_000, sections: { '§5': 2_500 } }, memory: { sections: { Rules: 1_000 } } });
    expect(budgets.checkpoint.total).toBe(12_000);
    expect(budgets.checkpoint.sections['§5']).toBe(2_500);
    expect(budgets.checkpoint.sections['§4']).toBe(800);
    expect(budgets.memory).toEqual({ total: 10_000, sections: { ...DEFAULT_BUDGETS.memory.sections, Rules: 1_000 } });
  });

  it('refuses checkpoint sections that sum above the total, naming the key and both sums', () => {
    const error = refusal({ checkpoint: { sections: { '§10': 2_001 } } });
    expect(error.code).toBe('invalid_config');
    expect(error.message).toMatch(/^budgets\.checkpoint\.sections: the section budgets sum to 11001 tokens, above budgets\.checkpoint\.total = 11000/);
    expect(error.details).toEqual({ key: 'budgets.checkpoint.sections', sum: 11_001, total: 11_000 });
  });

  it('refuses a total lowered below the default sections', () => {
    const error = refusal({ memory: { total: 9_000 } });
    expect(error.details).toEqual({ key: 'budgets.memory.sections', sum: 10_000, total: 9_000 });
  });

  it('accepts sections that sum exactly to the total', () => {
    expect(resolveBudgets({ checkpoint: { total: 11_100, sections: { '§11': 700 } } }).checkpoint.total).toBe(11_100);
  });

  it('refuses unknown section keys, naming the section map', () => {
    const error = refusal({ checkpoint: { sections: { '§12': 100 } } });
    expect(error.code).toBe('invalid_config');
    expect(error.details['key']).toBe('budgets.checkpoint.sections');
    expect(error.message).toContain('§12');
    expect(refusal({ memory: { sections: { 'Open notes': 100 } } }).details['key']).toBe('budgets.memory.sections');
  });

  it('refuses unknown files and values that are not positive integers, naming the key', () => {
    expect(refusal({ checkpiont: {} }).details['key']).toBe('budgets');
    expect(refusal({ checkpoint: { total: 0 } }).details['key']).toBe('budgets.checkpoint.total');
    expect(refusal({ memory: { sections: { Rules: 1.5 } } }).details['key']).toBe('budgets.memory.sections.Rules');
    expect(refusal({ checkpoint: { sections: { '§1': '400' } } }).details['key']).toBe('budgets.checkpoint.sections.§1');
  });

  it('exposes the schema for the daemon options', () => {
    expect(BudgetConfigSchema.safeParse({ checkpoint: { total: 5 } }).success).toBe(true);
  });
});

describe('renderBudgetTable', () => {
  it('renders the writer-task table: a heading, then rows of three entries indented by three spaces', () => {
    expect(renderBudgetTable(DEFAULT_BUDGETS)).toBe(
      [
        'Section budgets (~tokens):',
        '   §1: 400    §2: 700    §3: 600',
        '   §4: 800    §5: 1500    §6: 1100',
        '   §7: 1500    §8: 1100    §9: 700',
        '   §10: 2000    §11: 600',
        '   Project context: 1000    Rules: 2000    Architecture decisions: 3000',
        '   Discovered durable knowledge: 4000',
      ].join('\n'),
    );
  });

  it('shows configured values', () => {
    expect(renderBudgetTable(resolveBudgets({ checkpoint: { total: 12_000, sections: { '§2': 900 } } }))).toContain('§2: 900');
  });
});
