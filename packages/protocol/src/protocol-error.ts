import { ERROR_CODES, type ErrorCode, type ErrorReply } from './error-reply.ts';

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
   * Turns anything thrown while serving a request into a `ProtocolError`: a `ProtocolError` as it is; an error that
   * carries one of the protocol's codes (`code: 'too_large'` from a `TransportError`, `not_found` from a component
   * that knows the protocol) with that code and its `details`; anything else as `internal` with the error's message.
   */
  static from(err: unknown): ProtocolError {
    if (err instanceof ProtocolError) return err;
    if (err instanceof Error) {
      const { code, details } = err as { code?: unknown; details?: unknown };
      const known = typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
      return new ProtocolError(known ? (code as ErrorCode) : 'internal', err.message, known ? details : undefined, { cause: err });
    }
    return new ProtocolError('internal', String(err));
  }
}
