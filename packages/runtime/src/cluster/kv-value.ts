import type { KV } from '@nats-io/kv';
import type { z } from 'zod';
import { ClusterError } from './cluster-error.ts';
import { withRetry, type RetryPolicy } from './retry.ts';

/** The value of `key` (null when it does not exist or was deleted), retrying transient failures. */
export async function readKv(kv: KV, key: string, retry: RetryPolicy): Promise<Uint8Array | null> {
  const entry = await withRetry(`KV get ${key}`, () => kv.get(key), retry);
  return entry === null || entry.operation !== 'PUT' ? null : entry.value;
}

/**
 * A KV value decoded (`format` names the encoding in the error) and checked against `schema`; anything else is a
 * `ClusterError('bad_entry')` naming the key.
 */
export function checkKvValue<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string, format: { name: string; decode: (bytes: Uint8Array) => unknown }): T {
  let value: unknown;
  try {
    value = format.decode(bytes);
  } catch (err) {
    throw new ClusterError('bad_entry', `KV ${key}: not ${format.name}`, { key }, { cause: err });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ClusterError('bad_entry', `KV ${key}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { key });
  return parsed.data;
}
