/**
 * Structural comparison of plain data (what the event log stores): objects, arrays, strings, numbers, booleans, null.
 * A key whose value is `undefined` counts as absent, because a value that went through the log (MessagePack) or a
 * worker boundary (structured clone) may lose or keep such keys depending on the path it took.
 */

/** Path of the first difference between `a` and `b` (`""` for the roots, e.g. `state.watermark`), or null if equal. */
export function firstDifference(a: unknown, b: unknown): string | null {
  const found = differenceAt(a, b);
  if (found === null) return null;
  let path = '';
  for (let i = found.length - 1; i >= 0; i--) {
    const step = found[i] as string | number;
    path = typeof step === 'number' ? `${path}[${step}]` : path === '' ? step : `${path}.${step}`;
  }
  return path;
}

/**
 * `null` when `a` and `b` are equal; else the path to the first difference, innermost step first (an index as a
 * number, a key as a string). The daemon compares every fold's summaries this way, so equal values cost no allocation
 * beyond the key lists, and a path is built for a difference only.
 */
function differenceAt(a: unknown, b: unknown): (string | number)[] | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return [];
  if (Array.isArray(a) !== Array.isArray(b)) return [];
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (i >= a.length || i >= b.length) return [i];
      const found = differenceAt(a[i], b[i]);
      if (found !== null) {
        found.push(i);
        return found;
      }
    }
    return null;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  // The keys of `left`, then those only `right` has (a key holding undefined is absent on either side).
  const leftKeys = Object.keys(left);
  for (let i = 0; i < leftKeys.length; i++) {
    const key = leftKeys[i] as string;
    const found = differenceAt(left[key], right[key]);
    if (found !== null) {
      found.push(key);
      return found;
    }
  }
  const rightKeys = Object.keys(right);
  for (let i = 0; i < rightKeys.length; i++) {
    const key = rightKeys[i] as string;
    if (Object.hasOwn(left, key)) continue;
    const found = differenceAt(undefined, right[key]);
    if (found !== null) {
      found.push(key);
      return found;
    }
  }
  return null;
}

/** True when `a` and `b` are structurally equal plain data (see `firstDifference`). */
export function plainEqual(a: unknown, b: unknown): boolean {
  return firstDifference(a, b) === null;
}
