/** Shorter keys are not redacted: replacing a few common characters everywhere would garble the text around them. */
const MIN_KEY_LENGTH = 8;

/** What stands in for a key in redacted text. */
export const REDACTED = '[redacted key]';

/**
 * Plain data with every occurrence of `key` in its strings (object keys included) replaced by `[redacted key]`: what a
 * writer reports goes through it when the writer called the model with an agent's key, since providers echo the key
 * in their errors. The same value when there is no key (or it is under 8 characters) or nothing contains it.
 */
export function redactKey<T>(value: T, key: string | null): T {
  if (key === null || key.length < MIN_KEY_LENGTH) return value;
  return redact(value, key) as T;
}

function redact(value: unknown, key: string): unknown {
  if (typeof value === 'string') return value.includes(key) ? value.replaceAll(key, REDACTED) : value;
  if (Array.isArray(value)) {
    const list: readonly unknown[] = value;
    let out: unknown[] | null = null;
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      const next = redact(item, key);
      if (next !== item) (out ??= list.slice())[i] = next;
    }
    return out ?? list;
  }
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value;
  let changed = false;
  const entries = Object.entries(value).map(([k, v]): [string, unknown] => {
    const nk = redact(k, key) as string;
    const nv = redact(v, key);
    if (nk !== k || nv !== v) changed = true;
    return [nk, nv];
  });
  return changed ? Object.fromEntries(entries) : value;
}
