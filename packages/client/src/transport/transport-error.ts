/**
 * Why a transport operation failed. `timeout`: no reply in time; `no_responders`: nobody subscribes to the subject;
 * `closed`: the connection is closed or draining; `too_large`: the payload (with its headers) exceeds `maxPayload`;
 * `forbidden`: the server's permissions do not let this connection publish there (or read its replies);
 * `failed`: anything else the underlying client reported (see `cause`).
 */
export type TransportErrorCode = 'timeout' | 'no_responders' | 'closed' | 'too_large' | 'forbidden' | 'failed';

/** The error every `Transport` adapter throws or rejects with. */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  readonly code: TransportErrorCode;

  constructor(code: TransportErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }

  /** Whether the same request may succeed later (`timeout`, `no_responders`): a daemon may be starting or busy. */
  get retryable(): boolean {
    return this.code === 'timeout' || this.code === 'no_responders';
  }
}
