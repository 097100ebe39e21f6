import {
  ClosedConnectionError,
  DrainingConnectionError,
  headers as natsHeaders,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
} from '@nats-io/nats-core';
import { connect, credsAuthenticator, nkeyAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { messageSize } from './payload-size.ts';
import { TransportError } from './transport-error.ts';
import type {
  Headers,
  InboundMessage,
  ReplyMessage,
  RequestOptions,
  Transport,
  TransportSubscription,
} from './transport.ts';

const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

export interface NatsTransportOptions {
  /** Server URL(s), e.g. `nats://127.0.0.1:4222`. */
  readonly servers: string | readonly string[];
  /** Connection name shown by the server's monitoring. */
  readonly name?: string;
  /** Reconnect attempts after a disconnect; `-1` retries forever. Default: the client's own (10). */
  readonly maxReconnectAttempts?: number;
  /** Called when a subscription handler throws. Default: `console.error`. */
  readonly onHandlerError?: (err: unknown, subject: string) => void;
  /** How the connection authenticates: user and password, a token, a credentials file's content (JWT + NKey seed), or an NKey seed. */
  readonly auth?: NatsAuth;
  /** TLS: PEM files of the CA that signed the servers' certificates and, for mutual TLS, this client's certificate and key. */
  readonly tls?: NatsTls;
  /**
   * Subject prefix of this connection's reply inboxes (default `_INBOX`). A project's credentials may then subscribe
   * to `<inboxPrefix>.>` alone instead of every connection's `_INBOX.>`, so no project can read another's replies.
   */
  readonly inboxPrefix?: string;
}

export type NatsAuth =
  | { readonly user: string; readonly pass: string }
  | { readonly token: string }
  | { readonly credentials: string }
  /** An NKey user's seed (`SU…`): the server knows the user by its public key. */
  | { readonly nkeySeed: string };

export interface NatsTls {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** The connection options `auth` and `tls` stand for. */
function securityOptions(options: NatsTransportOptions): Partial<ConnectionOptions> {
  const out: { -readonly [K in keyof ConnectionOptions]?: ConnectionOptions[K] } = {};
  const auth = options.auth;
  if (auth !== undefined) {
    if ('credentials' in auth) out.authenticator = credsAuthenticator(new TextEncoder().encode(auth.credentials));
    else if ('nkeySeed' in auth) out.authenticator = nkeyAuthenticator(new TextEncoder().encode(auth.nkeySeed.trim()));
    else if ('token' in auth) out.token = auth.token;
    else {
      out.user = auth.user;
      out.pass = auth.pass;
    }
  }
  if (options.tls !== undefined) out.tls = { ...options.tls };
  return out;
}

/**
 * The `Transport` over a real NATS connection (`@nats-io/transport-node` v3, NATS core only). Sizes are checked
 * against the server's `max_payload` before anything is sent, so an oversized message fails with `too_large` the same
 * way as on `MemoryTransport`.
 */
export class NatsTransport implements Transport {
  readonly #nc: NatsConnection;
  readonly #onHandlerError: (err: unknown, subject: string) => void;
  #closing: Promise<void> | undefined;

  private constructor(nc: NatsConnection, options: NatsTransportOptions) {
    this.#nc = nc;
    this.#onHandlerError =
      options.onHandlerError ?? ((err, subject) => console.error(`handler for ${subject} threw`, err));
  }

  /** Connects; rejects with the client's error when no server can be reached. */
  static async connect(options: NatsTransportOptions): Promise<NatsTransport> {
    const nc = await connect({
      servers: typeof options.servers === 'string' ? options.servers : [...options.servers],
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.maxReconnectAttempts === undefined ? {} : { maxReconnectAttempts: options.maxReconnectAttempts }),
      ...(options.inboxPrefix === undefined ? {} : { inboxPrefix: options.inboxPrefix }),
      ...securityOptions(options),
      // Without it the client makes an Error per request (and one per request timer) only to keep the caller's stack
      // for a failure: some 15-20 µs on every request a recorded call makes. A failure still comes as the same
      // error classes, which mapError turns into a TransportError.
      noAsyncTraces: true,
    });
    return new NatsTransport(nc, options);
  }

  /** The underlying connection, for what the port does not cover (status events, JetStream). */
  get connection(): NatsConnection {
    return this.#nc;
  }

  /** The current server's `max_payload` (re-read on every call: a reconnect may reach another server). */
  get maxPayload(): number {
    return this.#nc.info?.max_payload ?? 1024 * 1024;
  }

  subscribe(subject: string, handler: (msg: InboundMessage) => void, options: { queue?: string } = {}): TransportSubscription {
    try {
      const sub = this.#nc.subscribe(subject, {
        ...(options.queue === undefined ? {} : { queue: options.queue }),
        callback: (err, msg) => {
          // Errors here are subscription-level (e.g. a permission violation); the connection reports them as status.
          if (err !== null) return;
          this.#dispatch(handler, msg);
        },
      });
      return { unsubscribe: () => sub.unsubscribe() };
    } catch (err) {
      throw mapError(err, subject, this.#nc);
    }
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions = {}): Promise<ReplyMessage> {
    this.#checkSize(data, options.headers);
    try {
      const reply = await this.#nc.request(subject, data, {
        timeout: options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
        ...withHeaders(options.headers),
      });
      return { data: reply.data, headers: fromNatsHeaders(reply.headers) };
    } catch (err) {
      throw mapError(err, subject, this.#nc);
    }
  }

  publish(subject: string, data: Uint8Array, headers?: Headers): void {
    this.#checkSize(data, headers);
    try {
      this.#nc.publish(subject, data, withHeaders(headers));
    } catch (err) {
      throw mapError(err, subject, this.#nc);
    }
  }

  async flush(): Promise<void> {
    try {
      await this.#nc.flush();
    } catch (err) {
      throw mapError(err, 'flush', this.#nc);
    }
  }

  /** Drains (in-flight messages still reach their handlers, which may still respond) and closes. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#nc.isClosed() ? Promise.resolve() : this.#nc.drain().catch(() => this.#nc.close());
    return this.#closing;
  }

  #dispatch(handler: (msg: InboundMessage) => void, msg: Msg): void {
    const reply = msg.reply;
    const inbound: InboundMessage = {
      subject: msg.subject,
      data: msg.data,
      headers: fromNatsHeaders(msg.headers),
      ...(reply === undefined || reply === '' ? {} : { reply }),
      respond: (body, replyHeaders) => {
        if (reply !== undefined && reply !== '') this.publish(reply, body, replyHeaders);
      },
    };
    try {
      handler(inbound);
    } catch (err) {
      this.#onHandlerError(err, msg.subject);
    }
  }

  #checkSize(data: Uint8Array, headers: Headers | undefined): void {
    const size = messageSize(data, headers);
    if (size > this.maxPayload) {
      throw new TransportError('too_large', `message of ${size} bytes exceeds max payload ${this.maxPayload}`);
    }
  }
}

function withHeaders(headers: Headers | undefined): { headers?: MsgHdrs } {
  if (headers === undefined) return {};
  const entries = Object.entries(headers);
  if (entries.length === 0) return {};
  const h = natsHeaders();
  for (const [key, value] of entries) h.set(key, value);
  return { headers: h };
}

/** NATS headers may repeat a key; the port's headers are single-valued, so repeated values are joined with ", ". */
function fromNatsHeaders(h: MsgHdrs | undefined): Headers {
  if (h === undefined) return {};
  const out: Record<string, string> = {};
  for (const key of h.keys()) out[key] = h.values(key).join(', ');
  return out;
}

function mapError(err: unknown, subject: string, nc: NatsConnection): unknown {
  if (err instanceof TransportError) return err;
  const options = { cause: err };
  if (err instanceof TimeoutError) return new TransportError('timeout', `request to ${subject} timed out`, options);
  if (err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders())) {
    return new TransportError('no_responders', `no responders for ${subject}`, options);
  }
  if (err instanceof ClosedConnectionError || err instanceof DrainingConnectionError || nc.isClosed()) {
    return new TransportError('closed', 'connection closed', options);
  }
  // A request the server refused: the client rejects it with a request error caused by the violation.
  if (err instanceof PermissionViolationError || (err instanceof RequestError && err.cause instanceof PermissionViolationError)) {
    return new TransportError('forbidden', `NATS permissions refuse ${subject} to this connection: ${err.message}`, options);
  }
  if (err instanceof Error && err.message.includes('max_payload')) {
    return new TransportError('too_large', err.message, options);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new TransportError('failed', `${subject}: ${message}`, options);
}
