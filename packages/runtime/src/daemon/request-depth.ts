/**
 * Deepest nesting of maps and arrays a request may carry, the body itself being level 1. Far above what real requests
 * use (an OpenAI tool's JSON schema nests a few dozen levels at most) and far below what breaks the recursive code a
 * request goes through: msgpackr's encoder overflows the stack at a few thousand levels when the event log stores
 * the request, while `JSON.parse` accepts any depth that fits in the size limit.
 */
export const MAX_REQUEST_DEPTH = 100;

/**
 * Finds the first map or array nested deeper than `maxDepth` in a decoded request and returns its path (keys and
 * indexes joined with dots, as in `bad_request` details), or `null` when the value is shallow enough. Iterative, so
 * it cannot overflow the stack itself.
 */
export function findTooDeep(value: unknown, maxDepth: number = MAX_REQUEST_DEPTH): string | null {
  const stack: Node[] = [{ value, key: '', parent: null, depth: 1 }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (typeof node.value !== 'object' || node.value === null || node.value instanceof Uint8Array) continue;
    if (node.depth > maxDepth) return pathOf(node);
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
