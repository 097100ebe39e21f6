import { TransportError, type TransportErrorCode } from '@baton/client';
import { LogRecordError } from '@baton/log-schema';
import { MemoryStoreError, type MemoryStoreErrorCode } from '@baton/memory-store';
import { ERROR_CODES, ProtocolError, type ErrorCode } from '@baton/protocol';
import { ClusterError, type ClusterErrorCode } from '../cluster/cluster-error.ts';

/*
 * The protocol code a client is answered with, for each error code of the packages the daemon calls. One row per
 * code, so a package that adds a code must decide here what a client sees: nothing of another package reaches the
 * wire because its code happens to be spelled like one of the protocol's.
 */

const CLUSTER: Readonly<Record<ClusterErrorCode, ErrorCode>> = {
  // JetStream did not answer in time (an election, a lost quorum): the same request may succeed later.
  unavailable: 'unavailable',
  fenced: 'internal',
  not_owner: 'internal',
  owned_elsewhere: 'internal',
  bad_entry: 'internal',
  interleaved: 'internal',
  gap: 'internal',
  config: 'internal',
};

const TRANSPORT: Readonly<Record<TransportErrorCode, ErrorCode>> = {
  // A reply or event over the server's payload limit.
  too_large: 'too_large',
  // The server's permissions refused a subject the daemon publishes to.
  forbidden: 'forbidden',
  timeout: 'internal',
  no_responders: 'internal',
  closed: 'internal',
  failed: 'internal',
};

// A memory-store failure while serving a request is the daemon's own fault, whatever its code: a memory file the
// daemon looked for and did not find is not the client's unknown session.
const MEMORY_STORE: Readonly<Record<MemoryStoreErrorCode, ErrorCode>> = {
  invalid_id: 'internal',
  path_refused: 'internal',
  not_found: 'internal',
  not_a_file: 'internal',
  edit_mismatch: 'internal',
  invalid_argument: 'internal',
  unknown_prompt: 'internal',
  missing_prompt_var: 'internal',
  invalid_config: 'internal',
};

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
}

/** The protocol code `err` is answered with, and whether its details go along (only a protocol code's do). */
function codeOf(err: Error): { readonly code: ErrorCode; readonly details: unknown } {
  const tabled = (code: ErrorCode, details: unknown) => ({ code, details: code === 'internal' ? undefined : details });
  if (err instanceof ProtocolError) return { code: err.code, details: err.details };
  if (err instanceof ClusterError) return tabled(CLUSTER[err.code], err.details);
  if (err instanceof TransportError) return tabled(TRANSPORT[err.code], undefined);
  if (err instanceof MemoryStoreError) return tabled(MEMORY_STORE[err.code], err.details);
  if (err instanceof LogRecordError) return { code: 'internal', details: undefined };
  // An error of no package's class that carries a protocol code (a component that speaks the protocol throwing a
  // plain `Error` with `code`, or one rebuilt after crossing a thread) keeps it.
  const { code, details } = err as { code?: unknown; details?: unknown };
  return isErrorCode(code) ? { code, details } : { code: 'internal', details: undefined };
}

/**
 * Anything thrown while serving a request, as the `ProtocolError` the client is answered with: a `ProtocolError` as
 * it is; another package's error with the code the tables above give it; anything else `internal`, with its message.
 * The original error is the cause (its stack is what a log shows).
 */
export function protocolErrorOf(err: unknown): ProtocolError {
  if (err instanceof ProtocolError) return err;
  if (!(err instanceof Error)) return new ProtocolError('internal', String(err));
  const { code, details } = codeOf(err);
  return new ProtocolError(code, err.message, details, { cause: err });
}
