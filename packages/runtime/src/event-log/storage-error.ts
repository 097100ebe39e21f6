import { ProtocolError } from '@baton/protocol';

/**
 * The error the appends of a transaction that did not commit reject with: `unavailable` with reason `storage` (the
 * disk is full, or the file cannot be written), naming the cause lmdb-js gives (as `commitError`, a promise it
 * rejects with the system error; it is read here so that it is handled).
 */
export async function storageError(error: unknown): Promise<ProtocolError> {
  const commitError = (error as { commitError?: unknown } | null)?.commitError;
  let cause: unknown = error;
  if (commitError instanceof Promise) {
    const settled = commitError.then(
      () => null,
      (reason: unknown) => reason,
    );
    // lmdb-js rejects it in the same turn as the commit; do not wait on one that never settles
    const underlying = await Promise.race([settled, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
    if (underlying !== null) cause = underlying;
  }
  const detail = cause instanceof Error ? cause.message : String(cause);
  const errno = (cause as { code?: unknown } | null)?.code;
  return new ProtocolError(
    'unavailable',
    `the event log could not write durably (${detail}${typeof errno === 'number' || typeof errno === 'string' ? `, ${String(errno)}` : ''}): nothing of this request was acknowledged; retry once storage has room`,
    { reason: 'storage' },
    { cause },
  );
}
