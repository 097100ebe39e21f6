import { createHash } from 'node:crypto';

/**
 * The lookup key a message id registers in its session stream (`AppendInput.keys`): `m:<id>` for short ids, a hash
 * for long ones or ones with control characters, so every key fits the log's key limit and sorts cleanly. Part of
 * the format on disk: a message is found again by this key after a restart and on another daemon.
 */
export function messageKey(id: string): string {
  return id.length <= 200 && !/[\u0000-\u001f]/.test(id) ? `m:${id}` : `m#${createHash('sha256').update(id).digest('hex')}`;
}
