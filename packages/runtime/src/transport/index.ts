/** The transport port and its two adapters. */
export type {
  Transport,
  Headers,
  InboundMessage,
  ReplyMessage,
  RequestOptions,
  TransportSubscription,
} from './transport.ts';
export { TransportError, type TransportErrorCode } from './transport-error.ts';
export { NatsTransport, type NatsTransportOptions } from './nats-transport.ts';
export { MemoryTransport, MemoryBus, DEFAULT_MAX_PAYLOAD, type MemoryBusOptions } from './memory-transport.ts';
