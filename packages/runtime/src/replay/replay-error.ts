/** Why a replay could not even start. */
export type ReplayErrorCode = 'not_found' | 'malformed';

/**
 * Thrown by `readTimeline` and `verifySession` when the session cannot be replayed at all: `not_found` (no stream, or
 * a stream whose first record is not `session.opened`) or `malformed` (the opening record carries no usable setup).
 * A replay that runs but disagrees with the log is not an error: it is a `Divergence` in the result.
 */
export class ReplayError extends Error {
  readonly code: ReplayErrorCode;

  constructor(code: ReplayErrorCode, message: string) {
    super(message);
    this.name = 'ReplayError';
    this.code = code;
  }
}
