import type { ErrorCode, ErrorReply } from './error-reply.ts';

/**
 * A failure that goes back to the caller as an error reply. Thrown by `decodeRequest` (`decode_error`) and
 * `parseRequest` (`bad_request`); the daemon throws it with the other codes (`not_found`, `unavailable`, …).
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: ErrorCode;
  /** Structured detail; for `bad_request` an `IssueDetail[]` listing the failing paths. */
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, details?: unknown, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  /** The wire form: `{ ok: false, error: { code, message, details? } }` (no `details` key when there are none). */
  toReply(): ErrorReply {
    const error: ErrorReply['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { ok: false, error };
  }

  /**
   * Turns anything thrown while serving a request into a `ProtocolError`: a `ProtocolError` as it is, an error
   * carrying `code: 'too_large'` (a `TransportError` from `respond`) as `too_large`, anything else as `internal`
   * with the error's message.
   */
  static from(err: unknown): ProtocolError {
    if (err instanceof ProtocolError) return err;
    if (err instanceof Error) {
      const code = (err as { code?: unknown }).code === 'too_large' ? 'too_large' : 'internal';
      return new ProtocolError(code, err.message, undefined, { cause: err });
    }
    return new ProtocolError('internal', String(err));
  }
}
