import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffLines, unifiedDiff } from '../src/memory/line-diff.ts';

/*
 * Protects the line diff behind `baton memory diff`: it must reproduce both texts, be a shortest edit script, and
 * print hunks the way `diff -u` does.
 */

/** Length of the longest common subsequence of two line lists (the reference a shortest edit script meets). */
function lcs(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j] as number;
      row[j] = x === b[j - 1] ? diagonal + 1 : Math.max(up, row[j - 1] as number);
      diagonal = up;
    }
  }
  return row[b.length] as number;
}

/** Texts of lines drawn from a small alphabet (so lines repeat), with or without a final newline. */
const text = fc
  .tuple(fc.array(fc.constantFrom('a', 'b', 'c', 'd', ''), { maxLength: 14 }), fc.boolean())
  .map(([lines, newline]) => (lines.length === 0 ? '' : lines.join('\n') + (newline ? '\n' : '')));

function side(lines: ReturnType<typeof diffLines>, keep: 'delete' | 'insert'): string {
  return lines
    .filter((l) => l.kind === 'equal' || l.kind === keep)
    .map((l) => l.text + (l.noNewline ? '' : '\n'))
    .join('');
}

describe('diffLines', () => {
  it('reproduces both texts with a shortest edit script', () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        const lines = diffLines(before, after);
        expect(side(lines, 'delete')).toBe(before);
        expect(side(lines, 'insert')).toBe(after);
        // lines compared as the diff compares them: a last line without newline is its own line
        const keys = (t: string): string[] => (t === '' ? [] : t.endsWith('\n') ? t.slice(0, -1).split('\n') : [...t.split('\n').slice(0, -1), `${t.split('\n').at(-1)}\u0000`]);
        const a = keys(before);
        const b = keys(after);
        expect(lines.filter((l) => l.kind !== 'equal')).toHaveLength(a.length + b.length - 2 * lcs(a, b));
      }),
      { numRuns: 500 },
    );
  });
});

describe('unifiedDiff', () => {
  const labels = { from: 'old', to: 'new' };
  const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');

  it('prints nothing for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', labels)).toEqual([]);
    expect(unifiedDiff('', '', labels)).toEqual([]);
  });

  it('keeps three lines of context and splits hunks more than six lines apart', () => {
    const before = numbered(20);
    const after = before.replace('line 2\n', 'line two\n').replace('line 17\n', 'line seventeen\n');
    expect(unifiedDiff(before, after, labels)).toEqual([
      '--- old',
      '+++ new',
      '@@ -1,5 +1,5 @@',
      ' line 1',
      '-line 2',
      '+line two',
      ' line 3',
      ' line 4',
      ' line 5',
      '@@ -14,7 +14,7 @@',
      ' line 14',
      ' line 15',
      ' line 16',
      '-line 17',
      '+line seventeen',
      ' line 18',
      ' line 19',
      ' line 20',
    ]);
    const close = before.replace('line 2\n', 'line two\n').replace('line 9\n', 'line nine\n');
    expect(unifiedDiff(before, close, labels).filter((l) => l.startsWith('@@'))).toEqual(['@@ -1,12 +1,12 @@']);
  });

  it('numbers empty sides as diff -u does and marks a missing final newline', () => {
    expect(unifiedDiff('', 'x\n', labels)).toEqual(['--- old', '+++ new', '@@ -0,0 +1 @@', '+x']);
    expect(unifiedDiff('x\ny\n', '', labels)).toEqual(['--- old', '+++ new', '@@ -1,2 +0,0 @@', '-x', '-y']);
    expect(unifiedDiff('a\nb\n', 'a\nb', labels)).toEqual(['--- old', '+++ new', '@@ -1,2 +1,2 @@', ' a', '-b', '+b', '\\ No newline at end of file']);
  });
});
