/**
 * A line diff (jsdiff's, the one the inspector's checkpoint diffs use too) and its unified rendering, as `diff -u`
 * prints it.
 */
import { diffLines as jsdiffLines } from 'diff';

/** One line of a diff: kept, removed from the old text, or added by the new one. */
export interface DiffLine {
  readonly kind: 'equal' | 'delete' | 'insert';
  readonly text: string;
  /** The line is its text's last and has no newline after it. */
  readonly noNewline: boolean;
}

/** The lines of `before` and `after` as kept, deleted and inserted lines, in order (a shortest edit script). */
export function diffLines(before: string, after: string): DiffLine[] {
  const out: DiffLine[] = [];
  // jsdiff compares lines with their newline: a last line without one differs from the same line with one.
  for (const change of jsdiffLines(before, after)) {
    const kind = change.added ? 'insert' : change.removed ? 'delete' : 'equal';
    const parts = change.value.split('\n');
    const newlineAtEnd = parts.at(-1) === '';
    if (newlineAtEnd) parts.pop();
    parts.forEach((text, i) => out.push({ kind, text, noNewline: !newlineAtEnd && i === parts.length - 1 }));
  }
  return out;
}

function range(start: number, count: number): string {
  if (count === 1) return String(start);
  return `${count === 0 ? start - 1 : start},${count}`;
}

const PREFIX = { equal: ' ', delete: '-', insert: '+' } as const;

/**
 * `diff -u` of two texts: the `---`/`+++` header with the given labels, then hunks with `context` lines around each
 * change (hunks closer than twice that are merged). Empty when the texts are equal.
 */
export function unifiedDiff(before: string, after: string, labels: { readonly from: string; readonly to: string }, context = 3): string[] {
  const lines = diffLines(before, after);
  const changes = lines.flatMap((l, i) => (l.kind === 'equal' ? [] : [i]));
  if (changes.length === 0) return [];
  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  // line numbers (1-based) of the old and new text at each diff line
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let n = 1;
  for (const l of lines) {
    oldAt.push(o);
    newAt.push(n);
    if (l.kind !== 'insert') o++;
    if (l.kind !== 'delete') n++;
  }
  let i = 0;
  while (i < changes.length) {
    let j = i;
    while (j + 1 < changes.length && (changes[j + 1] as number) - (changes[j] as number) - 1 <= 2 * context) j++;
    const from = Math.max(0, (changes[i] as number) - context);
    const to = Math.min(lines.length - 1, (changes[j] as number) + context);
    const hunk = lines.slice(from, to + 1);
    const oldCount = hunk.filter((l) => l.kind !== 'insert').length;
    const newCount = hunk.filter((l) => l.kind !== 'delete').length;
    out.push(`@@ -${range(oldAt[from] as number, oldCount)} +${range(newAt[from] as number, newCount)} @@`);
    for (const l of hunk) {
      out.push(`${PREFIX[l.kind]}${l.text}`);
      if (l.noNewline) out.push('\\ No newline at end of file');
    }
    i = j + 1;
  }
  return out;
}
