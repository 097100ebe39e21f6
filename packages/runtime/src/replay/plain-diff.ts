/**
 * Structural comparison of plain data (what the event log stores): objects, arrays, strings, numbers, booleans, null.
 * A key whose value is `undefined` counts as absent, because a value that went through the log (MessagePack) or a
 * worker boundary (structured clone) may lose or keep such keys depending on the path it took.
 */

/** Path of the first difference between `a` and `b` (`""` for the roots, e.g. `state.watermark`), or null if equal. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return path;
  if (Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (i >= a.length || i >= b.length) return `${path}[${i}]`;
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) {
    const d = firstDifference(left[key], right[key], path === '' ? key : `${path}.${key}`);
    if (d !== null) return d;
  }
  return null;
}

/** True when `a` and `b` are structurally equal plain data (see `firstDifference`). */
export function plainEqual(a: unknown, b: unknown): boolean {
  return firstDifference(a, b) === null;
}
