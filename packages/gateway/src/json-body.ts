/** The JSON value of a body's bytes (UTF-8), undefined when they are not JSON. */
export function jsonOf(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** A request body's JSON value as an object with a non-empty `model`, or null when it is not one. */
export function modelRequestBody(body: unknown): (Record<string, unknown> & { model: string }) | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' && model !== '' ? (body as Record<string, unknown> & { model: string }) : null;
}

/** Whether every element of a value is an object (a list of conversation items). */
export function isObjectList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
}
