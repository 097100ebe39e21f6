/** The TypeScript client of protocol v1. */
export { BatonClient, type BatonClientOptions, type CallOptions } from './baton-client.ts';
export { BatonRequestError, type BatonRequestErrorCode } from './baton-request-error.ts';
export { SessionEventStream, type SessionEventStreamOptions } from './session-event-stream.ts';
