import { describe, expect, it } from 'vitest';
import { parseDiscoveredEntries } from '../../src/validator/memory-entries.ts';
import { validateMemoryFiles } from '../../src/validator/validator.ts';
import { checkDuplicateTitles } from '../../src/validator/memory-rules.ts';
import {
  MEMORY_BODIES,
  MEMORY_PATH,
  fillTemplate,
  filledMemory,
  memoryTemplate,
  previousMemory,
  validInput,
} from './fixtures.ts';

const DISCOVERED = '## Discovered durable knowledge';

function memoryWith(discovered: string): string {
  return fillTemplate(memoryTemplate, { ...MEMORY_BODIES, [DISCOVERED]: discovered });
}

function duplicates(current: string, previous: string | null) {
  return checkDuplicateTitles(
    MEMORY_PATH,
    parseDiscoveredEntries(current),
    previous === null ? [] : parseDiscoveredEntries(previous),
  );
}

describe('parseDiscoveredEntries', () => {
  it('takes top-level bullets as entries, their bold lead as title, indented and field lines as continuation', () => {
    const entries = parseDiscoveredEntries(filledMemory());
    expect(entries.map((e) => e.title)).toEqual(['Legacy carts have no items', 'Tests by directory']);
    expect(entries[0]?.text).toContain('How to apply: default `items`');
    // Line numbers point into the whole file.
    const lines = filledMemory().split('\n');
    expect(lines[(entries[1]?.line ?? 0) - 1]).toMatch(/^- \*\*Tests by directory\*\*/);
  });

  it('takes ### headings as entries when the section uses them, bullets under them included', () => {
    const entries = parseDiscoveredEntries(
      memoryWith(['### Legacy carts', '- Why: v1 stored items elsewhere.', '- How to apply: default to [].', '', '### Ports', 'Why: rule.'].join('\n')),
    );
    expect(entries.map((e) => [e.title, e.text.split('\n').length])).toEqual([
      ['Legacy carts', 3],
      ['Ports', 2],
    ]);
  });

  it('ignores the placeholder, index lines, field bullets and fenced lines', () => {
    expect(parseDiscoveredEntries(memoryTemplate)).toEqual([]);
    const entries = parseDiscoveredEntries(
      memoryWith(['- A fact', '- Why: because', '```', '- not an entry', '```', '- See MEMORY-x.md (2 entries) - more'].join('\n')),
    );
    expect(entries.map((e) => e.title)).toEqual(['A fact']);
  });

  it('accepts Why: and How to apply: inline or emphasised, but not inside a title', () => {
    const ok = memoryWith('- **Port**: 8081. Why: a rule. How to apply: use it.\n- **Host** — 127.0.0.1\n  **Why:** x\n  *How to apply*: y');
    expect(validateMemoryFiles(validInput({ memory: ok })).filter((v) => v.severity === 'warn')).toEqual([]);
    const titleOnly = memoryWith('- **No why**: how to apply: nothing here');
    expect(validateMemoryFiles(validInput({ memory: titleOnly })).map((v) => v.rule)).toEqual([
      'memory-entry-missing-why',
      'memory-entry-missing-how-to-apply',
    ]);
  });
});

describe('duplicate titles in Discovered durable knowledge', () => {
  const legacy = '- **Legacy carts have no items**: old carts lack `items`.\n  Why: v1.\n  How to apply: default it.';
  const legacyEdited = '- **Legacy carts have no items**: carts before v2 lack `items`; v2 carts always have it.\n  Why: v1 stored items elsewhere.\n  How to apply: default `items` to [].';
  const ports = '- **Ports**: 8081.\n  Why: rule.\n  How to apply: use it.';

  it('does not count an unchanged entry as a duplicate', () => {
    expect(duplicates(memoryWith(`${legacy}\n${ports}`), memoryWith(`${legacy}\n${ports}`))).toEqual([]);
  });

  it('does not count an entry edited in place (same title, new text) as a duplicate', () => {
    expect(duplicates(memoryWith(legacyEdited), memoryWith(legacy))).toEqual([]);
    // The fixture itself: the legacy-cart entry was rewritten and a new entry added.
    expect(duplicates(filledMemory(), previousMemory)).toEqual([]);
  });

  it('reports a new entry whose title an existing entry already has', () => {
    const violations = duplicates(memoryWith(`${legacy}\n${ports}\n${legacyEdited}`), memoryWith(`${legacy}\n${ports}`));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({ rule: 'memory-duplicate-title', severity: 'error', file: MEMORY_PATH });
    expect(violations[0]?.detail).toMatch(/already had an entry titled "Legacy carts have no items" and now has 2/);
  });

  it('compares titles without case, emphasis, spacing or trailing punctuation', () => {
    const variant = '- legacy  carts have no items.\n  Why: again.\n  How to apply: again.';
    expect(duplicates(memoryWith(`${legacy}\n${variant}`), memoryWith(legacy)).map((v) => v.rule)).toEqual([
      'memory-duplicate-title',
    ]);
  });

  it('reports two new entries with the same title, even without a previous version', () => {
    const violations = duplicates(memoryWith(`${ports}\n${ports}`), null);
    expect(violations).toHaveLength(1);
    expect(violations[0]?.detail).toMatch(/has 2 entries titled "Ports" .*merge them/);
  });

  it('does not blame this writer for a duplicate the previous version already had', () => {
    expect(duplicates(memoryWith(`${ports}\n${ports}`), memoryWith(`${ports}\n${ports}`))).toEqual([]);
  });

  it('catches the same duplicate with ### entries', () => {
    const h = (body: string) => `### Ports\nWhy: rule.\nHow to apply: ${body}`;
    expect(duplicates(memoryWith(`${h('a')}\n\n${h('b')}`), memoryWith(h('a'))).map((v) => v.rule)).toEqual([
      'memory-duplicate-title',
    ]);
  });
});
