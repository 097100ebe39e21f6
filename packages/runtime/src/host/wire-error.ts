import { ERROR_CODES, ProtocolError, type ErrorCode } from '@baton/protocol';
import { protocolErrorOf } from '../errors/protocol-error-of.ts';

/** An error as it crosses a thread: plain data, with a protocol error code, and the original's name and stack. */
export interface WireError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: unknown;
  /** The thrown error's class name (`TypeError`, `ProtocolError`, …). */
  readonly name?: string;
  /** Its stack as the throwing thread saw it. */
  readonly stack?: string;
}

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code);
}

/** The plain form of anything thrown, with the protocol code `protocolErrorOf` gives it (`internal` for anything else). */
export function toWireError(err: unknown): WireError {
  if (err instanceof Error) {
    const { details } = err as { details?: unknown };
    return {
      code: protocolErrorOf(err).code,
      message: err.message,
      ...(details !== undefined ? { details } : {}),
      name: err.name,
      ...(typeof err.stack === 'string' ? { stack: err.stack } : {}),
    };
  }
  return { code: 'internal', message: String(err) };
}

/**
 * Turns a `WireError` back into the `ProtocolError` the daemon answers requests with. The error as it was thrown on
 * the other side is its `cause`: an `Error` with the original name and stack, so a log shows where it came from.
 */
export function fromWireError(error: WireError): ProtocolError {
  let cause: Error | undefined;
  if (error.name !== undefined || error.stack !== undefined) {
    cause = new Error(error.message);
    if (error.name !== undefined) cause.name = error.name;
    if (error.stack !== undefined) cause.stack = error.stack;
  }
  return new ProtocolError(isErrorCode(error.code) ? error.code : 'internal', error.message, error.details, cause !== undefined ? { cause } : undefined);
}
