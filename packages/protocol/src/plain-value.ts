/*
 * Keeping MessagePack plain. docs/protocol.md promises payloads any MessagePack library decodes: maps, arrays, strings,
 * numbers, booleans, nil — no msgpackr extensions. msgpackr would otherwise write `undefined` as ext 0, a Date as a
 * timestamp ext, and integers beyond 32 bits as float64 (which typed decoders refuse for an int field such as `at`).
 */

const INT32_MIN = -0x8000_0000;
const UINT32_MAX = 0xffff_ffff;

/**
 * Returns the value MessagePack should carry for `value`: what `JSON.stringify` would keep (objects drop `undefined`
 * and function members, arrays turn them into `null`, `toJSON()` is honoured so a Date becomes its ISO string),
 * except that `Uint8Array` stays binary, bigints stay integers, and safe integers outside the 32-bit range become
 * bigints so msgpackr writes them as int64/uint64 instead of float64.
 */
export function toPlain(value: unknown): unknown {
  switch (typeof value) {
    case 'number':
      if (Number.isSafeInteger(value) && (value < INT32_MIN || value > UINT32_MAX)) return BigInt(value);
      return value;
    case 'string':
    case 'boolean':
    case 'bigint':
      return value;
    case 'object':
      break;
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null || value instanceof Uint8Array) return value;
  const withToJson = value as { toJSON?: unknown };
  if (typeof withToJson.toJSON === 'function') return toPlain((withToJson.toJSON as () => unknown).call(value));
  if (Array.isArray(value)) return value.map((item) => toPlain(item) ?? null);
  const out: Record<string, unknown> = {};
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const plain = toPlain(record[key]);
    if (plain === undefined) continue;
    // An own "__proto__" key (JSON.parse makes those) must stay data, not become the copy's prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: plain, enumerable: true, writable: true, configurable: true });
    else out[key] = plain;
  }
  return out;
}

/**
 * Finds the first value that is not plain data in a decoded MessagePack value: `undefined` (ext 0), a Date (the
 * timestamp ext), the reserved byte 0xc1, or any other class msgpackr decodes an extension into. Returns a short
 * description with its path, or `null` when everything is plain. Runs on every request: the walk builds no path and
 * allocates nothing; the path is traced only for the value it reports.
 */
export function findNonPlain(value: unknown): string | null {
  const found = nonPlainPath(value);
  if (found === null) return null;
  const path = found.slice(1).reverse().join('.');
  return `${found[0] ?? 'object'} at ${path || 'the top level'}`;
}

/**
 * `null` when `value` is plain; else `[description, innermost key, …, outermost key]` of the first value that is not
 * (keys are collected on the way back out, so only the reported value's path is ever built).
 */
function nonPlainPath(value: unknown): string[] | null {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
      return null;
    case 'object':
      break;
    case 'undefined':
    case 'function':
    case 'symbol':
      return [typeof value];
  }
  if (value instanceof Uint8Array) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonPlainPath(value[i]);
      if (found !== null) {
        found.push(String(i));
        return found;
      }
    }
    return null;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return [(value as { constructor?: { name?: string } }).constructor?.name ?? 'object'];
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const found = nonPlainPath(record[key]);
    if (found !== null) {
      found.push(key);
      return found;
    }
  }
  return null;
}
