/** A UTF-16 code unit of a surrogate pair that has no partner. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** `text` with every lone surrogate replaced by U+FFFD (what a UTF-8 encoder writes for it). */
export function wellFormed(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\ufffd') : text;
}

/**
 * Replaces lone surrogates in every string of a decoded request (values and keys), in place, and returns it.
 *
 * Why: a JSON request may carry `"\ud800"`, which no UTF-8 store can keep; the event log would keep U+FFFD instead.
 * Doing the same replacement on arrival makes what the actors fold now equal to what a replay reads later.
 * Iterative, so a deeply nested value cannot overflow the stack.
 */
export function makeWellFormed(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value);
  const stack: unknown[] = [value];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') node[i] = wellFormed(item);
        else if (typeof item === 'object' && item !== null) stack.push(item);
      }
    } else if (typeof node === 'object' && node !== null && !(node instanceof Uint8Array)) {
      const record = node as Record<string, unknown>;
      const keys = Object.keys(record);
      if (keys.some((k) => LONE_SURROGATE.test(k))) {
        // Re-insert every key in its original order so the object keeps its shape (key order matters in fork mode).
        const entries = keys.map((k) => [wellFormed(k), record[k]] as const);
        for (const k of keys) delete record[k];
        for (const [k, v] of entries) record[k] = v;
      }
      for (const k of Object.keys(record)) {
        const item = record[k];
        if (typeof item === 'string') record[k] = wellFormed(item);
        else if (typeof item === 'object' && item !== null) stack.push(item);
      }
    }
  }
  return value;
}
