import { ERROR_CODES, ProtocolError, type ErrorCode } from '@baton/protocol';

/** An error as it crosses a thread: plain data, with a protocol error code. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: unknown;
}

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
}

/** The plain form of anything thrown: a protocol error code is kept, anything else becomes `internal`. */
export function toWireError(err: unknown): WireError {
  if (err instanceof Error) {
    const { code, details } = err as { code?: unknown; details?: unknown };
    return { code: isErrorCode(code) ? code : 'internal', message: err.message, ...(details !== undefined ? { details } : {}) };
  }
  return { code: 'internal', message: String(err) };
}

/** Turns a `WireError` back into the `ProtocolError` the daemon answers requests with. */
export function fromWireError(error: WireError): ProtocolError {
  return new ProtocolError(isErrorCode(error.code) ? error.code : 'internal', error.message, error.details);
}
