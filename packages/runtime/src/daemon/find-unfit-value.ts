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
 * JSON cannot write and token counting cannot read). Null when there is none. Iterative, so it cannot overflow the
 * stack itself.
 */
export function findUnfitValue(value: unknown, maxDepth: number = MAX_REQUEST_DEPTH): UnfitValue | null {
  const stack: Node[] = [{ value, key: '', parent: null, depth: 1 }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (typeof node.value === 'bigint') return { path: pathOf(node), message: 'integers beyond 2^53 are not supported' };
    if (typeof node.value !== 'object' || node.value === null || node.value instanceof Uint8Array) continue;
    if (node.depth > maxDepth) return { path: pathOf(node), message: `nested deeper than ${maxDepth} levels` };
    const entries = Array.isArray(node.value) ? node.value.entries() : Object.entries(node.value);
    for (const [key, child] of entries) stack.push({ value: child, key: String(key), parent: node, depth: node.depth + 1 });
  }
  return null;
}

/** A value on the walk; the path is only built for the one reported. */
interface Node {
  readonly value: unknown;
  readonly key: string;
  readonly parent: Node | null;
  readonly depth: number;
}

function pathOf(node: Node): string {
  const keys: string[] = [];
  for (let n: Node | null = node; n !== null && n.parent !== null; n = n.parent) keys.push(n.key);
  return keys.reverse().join('.');
}
