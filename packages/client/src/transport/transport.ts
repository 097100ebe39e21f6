/**
 * The transport port: NATS core request/reply and publish/subscribe. Adapters: `NatsTransport` (a real NATS
 * connection, `@nats-io/transport-node` v3) and `MemoryTransport` (in-process, for the embedded runtime and demo).
 * Both pass one contract suite.
 */

import type { Headers } from '@baton/protocol';

export type { Headers };

/** An inbound message; `respond` is a no-op when the message has no reply subject. */
export interface InboundMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Headers;
  /** The reply subject when the sender waits for an answer (a request), else absent. */
  readonly reply?: string;
  /**
   * Answers a request. Throws a `TransportError` with code `too_large` when `data` plus headers exceed
   * `maxPayload` (answer with a small error reply instead), or `closed` when the connection is closed.
   */
  respond(data: Uint8Array, headers?: Headers): void;
}

export interface ReplyMessage {
  readonly data: Uint8Array;
  readonly headers: Headers;
}

export interface TransportSubscription {
  unsubscribe(): void;
}

export interface RequestOptions {
  readonly timeoutMs?: number;
  readonly headers?: Headers;
}

export interface Transport {
  /** Largest payload the transport accepts, in bytes (NATS: the server's `max_payload`). */
  readonly maxPayload: number;
  /** Subscribes a handler; with `queue`, only one member of the queue group receives each message. */
  subscribe(subject: string, handler: (msg: InboundMessage) => void, options?: { queue?: string }): TransportSubscription;
  /**
   * Request/reply; rejects with a `TransportError` (code `timeout` / `no_responders` / `closed` / `too_large`).
   * The default timeout is adapter-specific (both shipped adapters: 5 s).
   */
  request(subject: string, data: Uint8Array, options?: RequestOptions): Promise<ReplyMessage>;
  /** Publishes without waiting; throws a `TransportError` (`too_large` / `closed`). */
  publish(subject: string, data: Uint8Array, headers?: Headers): void;
  /** Resolves once everything published so far has reached the server (NATS flush). */
  flush(): Promise<void>;
  /** Drains subscriptions and closes the connection. */
  close(): Promise<void>;
}
