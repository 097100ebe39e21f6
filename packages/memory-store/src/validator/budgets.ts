import { z } from 'zod';
import { MemoryStoreError } from '../memory-errors.ts';

/**
 * Token budgets of the writer-owned memory files: defaults whose section
 * budgets add up to the file total, a zod schema for overrides, and the refusal of configurations whose sections
 * could not all be filled within the total.
 */

/** Budget keys of the 11 checkpoint sections: the `§N` that starts each `## §N …` header. */
export const CHECKPOINT_BUDGET_KEYS = ['§1', '§2', '§3', '§4', '§5', '§6', '§7', '§8', '§9', '§10', '§11'] as const;

/** Budget keys of the 4 MEMORY.md sections: the header titles, verbatim. */
export const MEMORY_BUDGET_KEYS = [
  'Project context',
  'Rules',
  'Architecture decisions',
  'Discovered durable knowledge',
] as const;

export type CheckpointBudgetKey = (typeof CHECKPOINT_BUDGET_KEYS)[number];
export type MemoryBudgetKey = (typeof MEMORY_BUDGET_KEYS)[number];

/** The budget of one file: a whole-file total and one budget per section, in tokens. */
export interface FileBudget<Key extends string> {
  readonly total: number;
  readonly sections: Readonly<Record<Key, number>>;
}

/** Resolved budgets of checkpoint.md and MEMORY.md; every section sum is at most its total. */
export interface Budgets {
  readonly checkpoint: FileBudget<CheckpointBudgetKey>;
  readonly memory: FileBudget<MemoryBudgetKey>;
}

/** Default budgets: checkpoint 11 000 (sections sum to 11 000), MEMORY.md 10 000 (1 000/2 000/3 000/4 000). */
export const DEFAULT_BUDGETS: Budgets = Object.freeze({
  checkpoint: Object.freeze({
    total: 11_000,
    sections: Object.freeze({
      '§1': 400,
      '§2': 700,
      '§3': 600,
      '§4': 800,
      '§5': 1_500,
      '§6': 1_100,
      '§7': 1_500,
      '§8': 1_100,
      '§9': 700,
      '§10': 2_000,
      '§11': 600,
    }),
  }),
  memory: Object.freeze({
    total: 10_000,
    sections: Object.freeze({
      'Project context': 1_000,
      Rules: 2_000,
      'Architecture decisions': 3_000,
      'Discovered durable knowledge': 4_000,
    }),
  }),
});

const tokens = z.number().int().positive();

function sectionOverrides<const Keys extends readonly [string, ...string[]]>(keys: Keys) {
  return z.strictObject(Object.fromEntries(keys.map((key) => [key, tokens.optional()])) as {
    [K in Keys[number]]: z.ZodOptional<typeof tokens>;
  });
}

/**
 * Budget configuration (the `budgets` key of the daemon options): partial overrides merged onto
 * {@link DEFAULT_BUDGETS}. Unknown keys — a section that does not exist, a misspelt file — are refused.
 */
export const BudgetConfigSchema = z.strictObject({
  checkpoint: z
    .strictObject({ total: tokens.optional(), sections: sectionOverrides(CHECKPOINT_BUDGET_KEYS).optional() })
    .optional(),
  memory: z
    .strictObject({ total: tokens.optional(), sections: sectionOverrides(MEMORY_BUDGET_KEYS).optional() })
    .optional(),
});

/** Budget overrides as configured; every field is optional. */
export type BudgetConfig = z.input<typeof BudgetConfigSchema>;

/**
 * Merges `config` onto {@link DEFAULT_BUDGETS} and checks the result. Called once at start-up; the result is
 * immutable.
 *
 * @throws MemoryStoreError `invalid_config` naming the offending key (for instance `budgets.checkpoint.sections`):
 *   an unknown key, a value that is not a positive integer, or section budgets that sum above their file's total
 *   (the message gives both sums).
 */
export function resolveBudgets(config: unknown = {}): Budgets {
  const parsed = BudgetConfigSchema.safeParse(config ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = ['budgets', ...(issue?.path ?? []).map(String)].join('.');
    throw new MemoryStoreError('invalid_config', `${key}: ${issue?.message ?? 'invalid budget configuration'}`, {
      key,
      issues: parsed.error.issues.map((i) => ({ path: ['budgets', ...i.path.map(String)].join('.'), message: i.message })),
    });
  }
  const checkpoint = merge('checkpoint', DEFAULT_BUDGETS.checkpoint, parsed.data.checkpoint);
  const memory = merge('memory', DEFAULT_BUDGETS.memory, parsed.data.memory);
  return Object.freeze({ checkpoint, memory });
}

function merge<Key extends string>(
  file: 'checkpoint' | 'memory',
  defaults: FileBudget<Key>,
  override: { total?: number | undefined; sections?: Partial<Record<Key, number | undefined>> | undefined } | undefined,
): FileBudget<Key> {
  const sections = { ...defaults.sections } as Record<Key, number>;
  for (const [key, value] of Object.entries(override?.sections ?? {}) as [Key, number | undefined][]) {
    if (value !== undefined) sections[key] = value;
  }
  const total = override?.total ?? defaults.total;
  const sum = Object.values<number>(sections).reduce((a, b) => a + b, 0);
  if (sum > total) {
    const key = `budgets.${file}.sections`;
    throw new MemoryStoreError(
      'invalid_config',
      `${key}: the section budgets sum to ${sum} tokens, above budgets.${file}.total = ${total}; lower a section or raise the total`,
      { key, sum, total },
    );
  }
  return Object.freeze({ total, sections: Object.freeze(sections) });
}

/**
 * The budget table the writer task shows (`{{SECTION_BUDGETS}}`): a `Section budgets (~tokens):` line, then the
 * checkpoint sections and then the MEMORY.md sections as rows of up to three `<key>: <n>` entries separated by four
 * spaces, each row indented by three spaces.
 */
export function renderBudgetTable(budgets: Budgets): string {
  const rows: string[] = [];
  const addRows = (entries: string[]): void => {
    for (let i = 0; i < entries.length; i += 3) rows.push(`   ${entries.slice(i, i + 3).join('    ')}`);
  };
  addRows(CHECKPOINT_BUDGET_KEYS.map((key) => `${key}: ${budgets.checkpoint.sections[key]}`));
  addRows(MEMORY_BUDGET_KEYS.map((key) => `${key}: ${budgets.memory.sections[key]}`));
  return ['Section budgets (~tokens):', ...rows].join('\n');
}
