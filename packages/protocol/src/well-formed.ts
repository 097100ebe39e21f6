/** `text` with every lone surrogate (a UTF-16 code unit of a pair with no partner) replaced by U+FFFD, what a UTF-8 encoder writes for it. */
export function wellFormed(text: string): string {
  // The engine's own scan: no regular expression, no copy when the text is well-formed (nearly always).
  return text.isWellFormed() ? text : text.toWellFormed();
}

/**
 * Replaces lone surrogates in every string of a decoded request (values and keys), in place, and returns it.
 *
 * Why: a JSON request may carry `"\ud800"`, which no UTF-8 store can keep; the event log would keep U+FFFD instead.
 * Doing the same replacement on arrival makes what the actors fold now equal to what a replay reads later.
 * Iterative, so a deeply nested value cannot overflow the stack. Runs on every request: one pass over each object's
 * keys, and nothing allocated but the walk's stack unless something needs replacing.
 */
export function makeWellFormed(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value);
  const stack: unknown[] = [value];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') {
          if (!item.isWellFormed()) node[i] = item.toWellFormed();
        } else if (typeof item === 'object' && item !== null) stack.push(item);
      }
    } else if (typeof node === 'object' && node !== null && !(node instanceof Uint8Array)) {
      const record = node as Record<string, unknown>;
      const keys = Object.keys(record);
      let badKey = false;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        if (!k.isWellFormed()) badKey = true;
        const item = record[k];
        if (typeof item === 'string') {
          if (!item.isWellFormed()) record[k] = item.toWellFormed();
        } else if (typeof item === 'object' && item !== null) stack.push(item);
      }
      if (badKey) {
        // Re-insert every key in its original order so the object keeps its shape (key order matters in fork mode).
        const entries = keys.map((k) => [wellFormed(k), record[k]] as const);
        for (const k of keys) delete record[k];
        for (const [k, v] of entries) record[k] = v;
      }
    }
  }
  return value;
}
