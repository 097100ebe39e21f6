/**
 * Deepest nesting of maps and arrays a request may carry, the body itself being level 1. Far above what real requests
 * use (an OpenAI tool's JSON schema nests a few dozen levels at most) and far below what breaks the recursive code a
 * request goes through: msgpackr's encoder overflows the stack at a few thousand levels when the event log stores
 * the request, while `JSON.parse` accepts any depth that fits in the size limit.
 */
export const MAX_REQUEST_DEPTH = 100;

/** Where a decoded request holds a value Baton cannot carry, and why. */
export interface UnfitValue {
  /** Keys and indexes joined with dots, as in `bad_request` details. */
  readonly path: string;
  readonly message: string;
}

/**
 * Finds the first value in a decoded request that Baton cannot carry through its log, its workers and a JSON reply:
 * a map or array nested deeper than `maxDepth`, or an integer beyond 2^53 (msgpack decodes one to a bigint, which
 * JSON cannot write and token counting cannot read). Null when there is none. The walk descends at most `maxDepth`
 * levels, however deep the value (so it cannot overflow the stack), allocates nothing on the way, and builds the path
 * of the value it reports only.
 */
export function findUnfitValue(value: unknown, maxDepth: number = MAX_REQUEST_DEPTH): UnfitValue | null {
  const found = unfitAt(value, 1, maxDepth);
  if (found === null) return null;
  return { path: found.slice(1).reverse().join('.'), message: found[0] ?? '' };
}

/** `null` when `value` (at `depth`) is fit; else `[message, innermost key, …, outermost key]` of the first unfit value. */
function unfitAt(value: unknown, depth: number, maxDepth: number): string[] | null {
  if (typeof value === 'bigint') return ['integers beyond 2^53 are not supported'];
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return null;
  if (depth > maxDepth) return [`nested deeper than ${maxDepth} levels`];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unfitAt(value[i], depth + 1, maxDepth);
      if (found !== null) {
        found.push(String(i));
        return found;
      }
    }
    return null;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const found = unfitAt(record[key], depth + 1, maxDepth);
    if (found !== null) {
      found.push(key);
      return found;
    }
  }
  return null;
}
