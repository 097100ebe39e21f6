/** The TypeScript client of protocol v1 and the transports it runs on. Depends on `@baton/protocol` and NATS only. */
export { BatonClient, type BatonClientOptions, type CallOptions } from './baton-client.ts';
export { mayFailOver, type FailoverOptions } from './session-failover.ts';
export { BatonRequestError, type BatonRequestErrorCode } from './baton-request-error.ts';
export { SessionEventStream, type SessionEventStreamOptions } from './session-event-stream.ts';
export { Mailbox } from './mailbox.ts';
export type {
  Transport,
  Headers,
  InboundMessage,
  ReplyMessage,
  RequestOptions,
  TransportSubscription,
} from './transport/transport.ts';
export { TransportError, type TransportErrorCode } from './transport/transport-error.ts';
export { NatsTransport, type NatsAuth, type NatsTls, type NatsTransportOptions } from './transport/nats-transport.ts';
export { MemoryTransport, MemoryBus, DEFAULT_MAX_PAYLOAD, type MemoryBusOptions } from './transport/memory-transport.ts';
