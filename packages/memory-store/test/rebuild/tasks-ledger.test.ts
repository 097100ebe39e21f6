import { describe, expect, it } from 'vitest';
import { resolveRebuildCaps } from '../../src/rebuild/rebuild-caps.ts';
import { renderRebuildContext } from '../../src/rebuild/rebuild-context.ts';
import { type RebuildTask, renderTasksLedger } from '../../src/rebuild/tasks-ledger.ts';
import { TokenCounter } from '../../src/tokens/token-counter.ts';
import { baseInput, words } from './fixtures.ts';

describe('renderTasksLedger', () => {
  it('renders (none) for an empty task list', () => {
    expect(renderTasksLedger([])).toBe('(none)');
  });

  it('lists top-level tasks with status, focus and summary, and their sub-tasks with icons, depth-first', () => {
    const tasks: RebuildTask[] = [
      { id: 'T1', status: 'in_progress', summary: 'Add the rebuild renderer', focus: true },
      { id: 'T1.1', parent_id: 'T1', status: 'done', summary: 'caps' },
      { id: 'T2', status: 'blocked', summary: 'Ship it\nafter review' },
      { id: 'T1.2', parent_id: 'T1', status: 'open', summary: 'tests' },
      { id: 'T1.2.1', parent_id: 'T1.2', status: 'abandoned', summary: 'property test' },
      { id: 'T1.3', parent_id: 'T1', status: 'in_progress', summary: 'bench' },
      { id: 'T2.1', parent_id: 'T2', status: 'blocked', summary: 'review' },
      { id: 'T3', status: 'done', summary: 'Read the spec' },
    ];
    expect(renderTasksLedger(tasks)).toBe(
      [
        '- T1 (focus) in_progress — Add the rebuild renderer',
        '  Subtasks: ✅T1.1 / 🔵T1.2 / ❌T1.2.1 / 🔄T1.3',
        '- T2 blocked — Ship it after review',
        '  Subtasks: 🟡T2.1',
        '- T3 done — Read the spec',
      ].join('\n'),
    );
  });

  it('never shows orphans (a parent not in the list) nor their descendants', () => {
    const tasks: RebuildTask[] = [
      { id: 'T1', status: 'open', summary: 'kept' },
      { id: 'X.1', parent_id: 'X', status: 'open', summary: 'orphan' },
      { id: 'X.1.1', parent_id: 'X.1', status: 'done', summary: 'orphan child' },
      { id: 'A', parent_id: 'B', status: 'open', summary: 'cycle a' },
      { id: 'B', parent_id: 'A', status: 'open', summary: 'cycle b' },
    ];
    const ledger = renderTasksLedger(tasks);
    expect(ledger).toBe('- T1 open — kept');
    expect(renderTasksLedger(tasks.slice(1))).toBe('(none)');
  });

  it('is capped in tokens (not characters) within the rebuilt context, heading included', () => {
    const tasks: RebuildTask[] = Array.from({ length: 300 }, (_, i) => ({
      id: `T${i}`,
      status: 'open',
      summary: words(25, i + 1),
    }));
    const counter = new TokenCounter();
    for (const cap of [2_000, 600]) {
      const rendered = renderRebuildContext(baseInput({ tasks, caps: resolveRebuildCaps({ tasks_ledger: cap }) }));
      const section = rendered?.sections.find((s) => s.name === 'tasks_ledger');
      expect(section?.text.startsWith('## Tasks ledger\n- T0 open — ')).toBe(true);
      const tokens = counter.count(section?.text ?? '');
      expect(tokens).toBeLessThanOrEqual(cap);
      // Measured in tokens: a character cap would leave the section near cap/4 tokens.
      expect(tokens).toBeGreaterThan(cap * 0.8);
      expect(section?.text.endsWith('[… truncated to fit the token budget]')).toBe(true);
      // Cut at a line end: every listed task line is whole.
      const lines = section?.text.split('\n').slice(1, -1) ?? [];
      for (const line of lines) expect(line).toMatch(/^- T\d+ open — .+[a-z.]$/);
    }
  });
});
