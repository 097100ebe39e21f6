/**
 * Why a cluster operation failed, as a stable code:
 * - `fenced`: another daemon took the session over (a newer epoch wrote at the index this daemon wanted); this daemon
 *   must drop the session and write nothing more for it;
 * - `not_owner`: this daemon does not hold the session (never claimed, or dropped);
 * - `owned_elsewhere`: a live daemon holds the session (`details.owner`, `details.epoch`);
 * - `bad_entry`: a replicated log entry or KV value does not match its schema (`details` names it);
 * - `interleaved`: a session's replicated log holds an older epoch's record after a newer epoch's takeover marker;
 * - `gap`: an index is missing in a session's replicated log, or the local copy is not a prefix of it;
 * - `unavailable`: JetStream did not answer in time (no leader during an election, a lost quorum); retryable;
 * - `config`: a cluster option is invalid.
 */
export type ClusterErrorCode = 'fenced' | 'not_owner' | 'owned_elsewhere' | 'bad_entry' | 'interleaved' | 'gap' | 'unavailable' | 'config';

/** A cluster failure with a stable `code` and plain `details`; `unavailable` is the only retryable one. */
export class ClusterError extends Error {
  override readonly name = 'ClusterError';
  readonly code: ClusterErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ClusterErrorCode, message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  get retryable(): boolean {
    return this.code === 'unavailable';
  }
}
