/**
 * A line diff (Myers' O(ND) algorithm, after trimming the common prefix and suffix) and its unified rendering, as
 * `diff -u` prints it. Meant for memory files, which are small: the search keeps O(D²) of trace for D changed lines.
 */

/** One line of a diff: kept, removed from the old text, or added by the new one. */
export interface DiffLine {
  readonly kind: 'equal' | 'delete' | 'insert';
  readonly text: string;
  /** The line is its text's last and has no newline after it. */
  readonly noNewline: boolean;
}

interface Line {
  readonly text: string;
  readonly noNewline: boolean;
  /** What lines are compared by: a last line without newline differs from the same line with one. */
  readonly key: string;
}

function toLines(text: string): Line[] {
  if (text === '') return [];
  const parts = text.split('\n');
  const finalNewline = parts.at(-1) === '';
  if (finalNewline) parts.pop();
  return parts.map((t, i) => {
    const noNewline = !finalNewline && i === parts.length - 1;
    return { text: t, noNewline, key: noNewline ? `${t}\u0000` : t };
  });
}

/** Myers' shortest edit script between `a` and `b`, as diff lines in order. */
function myers(a: readonly Line[], b: readonly Line[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d]: v as it was before step d, for k in [-d-1, d+1] (all that backtracking step d reads)
  const trace: Int32Array[] = [];
  let done = max === 0;
  for (let d = 0; d <= max && !done; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number)) ? (v[offset + k + 1] as number) : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && (a[x] as Line).key === (b[y] as Line).key) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        done = true;
        break;
      }
    }
  }
  const out: DiffLine[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0 && (x > 0 || y > 0); d--) {
    const t = trace[d] as Int32Array;
    const at = (k: number): number => t[k + d + 1] as number;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      const line = a[--x] as Line;
      y--;
      out.push({ kind: 'equal', text: line.text, noNewline: line.noNewline });
    }
    if (d > 0) {
      if (x === prevX) {
        const line = b[--y] as Line;
        out.push({ kind: 'insert', text: line.text, noNewline: line.noNewline });
      } else {
        const line = a[--x] as Line;
        out.push({ kind: 'delete', text: line.text, noNewline: line.noNewline });
      }
    }
  }
  return out.reverse();
}

/** The lines of `before` and `after` as kept, deleted and inserted lines, in order (a shortest edit script). */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = toLines(before);
  const b = toLines(after);
  let start = 0;
  while (start < a.length && start < b.length && (a[start] as Line).key === (b[start] as Line).key) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && (a[a.length - 1 - end] as Line).key === (b[b.length - 1 - end] as Line).key) end++;
  const equal = (l: Line): DiffLine => ({ kind: 'equal', text: l.text, noNewline: l.noNewline });
  return [
    ...a.slice(0, start).map(equal),
    ...myers(a.slice(start, a.length - end), b.slice(start, b.length - end)),
    ...a.slice(a.length - end).map(equal),
  ];
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
