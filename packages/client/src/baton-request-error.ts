import type { ErrorCode } from '@baton/protocol';

/** A protocol error code from the daemon, or `invalid_reply` when the reply itself broke the protocol. */
export type BatonRequestErrorCode = ErrorCode | 'invalid_reply';

/**
 * Thrown by `BatonClient` when the daemon answered `{ ok: false, error }` (with the daemon's `code`, `message` and
 * `details`), or with `invalid_reply` when the reply could not be decoded or did not match the reply schema
 * (`details` then lists the failing paths). Transport failures (timeout, no responders, …) are `TransportError`s.
 */
export class BatonRequestError extends Error {
  override readonly name = 'BatonRequestError';
  readonly code: BatonRequestErrorCode;
  readonly details: unknown;
  /** The subject the request went to. */
  readonly subject: string;

  constructor(code: BatonRequestErrorCode, message: string, subject: string, details?: unknown, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.subject = subject;
    this.details = details;
  }
}
