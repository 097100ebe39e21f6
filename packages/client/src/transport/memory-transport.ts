import { messageSize } from './payload-size.ts';
import { parsePublishSubject, parseSubscriptionSubject, subjectMatches } from './subject-match.ts';
import { TransportError } from './transport-error.ts';
import type {
  Headers,
  InboundMessage,
  ReplyMessage,
  RequestOptions,
  Transport,
  TransportSubscription,
} from './transport.ts';

/** NATS' default `max_payload` (1 MiB). */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
let connectionSeq = 0;

export interface MemoryBusOptions {
  /** Largest message (data plus headers) the bus accepts. Default 1 MiB, as NATS. */
  readonly maxPayload?: number;
  /** Called when a subscription handler throws. Default: `console.error`. */
  readonly onHandlerError?: (err: unknown, subject: string) => void;
}

interface BusSubscription {
  readonly pattern: readonly string[];
  readonly groupKey: string | undefined;
  readonly handler: (msg: InboundMessage) => void;
  readonly owner: MemoryTransport;
  active: boolean;
}

interface Delivery {
  readonly sub: BusSubscription;
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers: Headers;
  readonly reply: string | undefined;
}

/**
 * The in-process "server" behind `MemoryTransport` connections, with NATS core semantics: `*` / `>` wildcards,
 * queue groups (one member per message, chosen round-robin so tests are deterministic), `max_payload`, and
 * asynchronous delivery in publish order (a FIFO drained on `setImmediate`, so a publisher never runs a handler
 * inside its own call stack). Each delivery gets its own copy of the data, as over a socket.
 */
export class MemoryBus {
  readonly maxPayload: number;
  readonly #onHandlerError: (err: unknown, subject: string) => void;
  readonly #subs = new Set<BusSubscription>();
  readonly #nextMember = new Map<string, number>();
  #queue: Delivery[] = [];
  #scheduled = false;
  #idleWaiters: (() => void)[] = [];

  constructor(options: MemoryBusOptions = {}) {
    this.maxPayload = options.maxPayload ?? DEFAULT_MAX_PAYLOAD;
    this.#onHandlerError =
      options.onHandlerError ?? ((err, subject) => console.error(`handler for ${subject} threw`, err));
  }

  /** Opens a new connection to this bus. */
  connect(): MemoryTransport {
    return new MemoryTransport(this);
  }

  /** @internal Registers a subscription (used by `MemoryTransport`). */
  add(sub: BusSubscription): void {
    this.#subs.add(sub);
  }

  /** @internal */
  remove(sub: BusSubscription): void {
    sub.active = false;
    this.#subs.delete(sub);
  }

  /** @internal Routes one message; returns how many subscriptions will receive it. */
  route(subject: string, data: Uint8Array, headers: Headers, reply: string | undefined): number {
    const tokens = parsePublishSubject(subject);
    const groups = new Map<string, BusSubscription[]>();
    const targets: BusSubscription[] = [];
    for (const sub of this.#subs) {
      if (!sub.active || !subjectMatches(sub.pattern, tokens)) continue;
      if (sub.groupKey === undefined) targets.push(sub);
      else groups.set(sub.groupKey, [...(groups.get(sub.groupKey) ?? []), sub]);
    }
    for (const [key, members] of groups) {
      const next = this.#nextMember.get(key) ?? 0;
      const member = members[next % members.length];
      this.#nextMember.set(key, next + 1);
      if (member !== undefined) targets.push(member);
    }
    const frozenHeaders = Object.freeze({ ...headers });
    for (const sub of targets) this.#queue.push({ sub, subject, data: data.slice(), headers: frozenHeaders, reply });
    this.#schedule();
    return targets.length;
  }

  /** @internal Resolves once every delivery queued so far has been handed to its handler. */
  whenIdle(): Promise<void> {
    if (this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #schedule(): void {
    if (this.#scheduled || this.#queue.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => this.#drain());
  }

  #drain(): void {
    this.#scheduled = false;
    // Deliver what is queued now; deliveries queued by the handlers wait for the next turn so I/O is not starved.
    const batch = this.#queue;
    this.#queue = [];
    for (const delivery of batch) {
      if (delivery.sub.active) this.#deliver(delivery);
    }
    if (this.#queue.length > 0) {
      this.#schedule();
      return;
    }
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #deliver({ sub, subject, data, headers, reply }: Delivery): void {
    const owner = sub.owner;
    const message: InboundMessage = {
      subject,
      data,
      headers,
      ...(reply === undefined ? {} : { reply }),
      respond: (body, replyHeaders) => {
        if (reply !== undefined) owner.publish(reply, body, replyHeaders);
      },
    };
    try {
      sub.handler(message);
    } catch (err) {
      this.#onHandlerError(err, subject);
    }
  }
}

/**
 * A `Transport` connection to a `MemoryBus`: the in-process adapter for the embedded runtime, the demo and unit
 * tests. `new MemoryTransport()` makes a private bus; `bus.connect()` gives several connections one bus (like
 * several NATS clients on one server). Passes the same contract suite as `NatsTransport`.
 */
export class MemoryTransport implements Transport {
  readonly #bus: MemoryBus;
  readonly #subs = new Set<BusSubscription>();
  readonly #pending = new Set<(err: TransportError) => void>();
  readonly #id = String(++connectionSeq);
  #inboxSeq = 0;
  #closing: Promise<void> | undefined;
  #closed = false;

  constructor(bus: MemoryBus = new MemoryBus()) {
    this.#bus = bus;
  }

  get maxPayload(): number {
    return this.#bus.maxPayload;
  }

  subscribe(subject: string, handler: (msg: InboundMessage) => void, options: { queue?: string } = {}): TransportSubscription {
    if (this.#closing !== undefined) throw new TransportError('closed', 'connection closed');
    const pattern = parseSubscriptionSubject(subject);
    const groupKey = options.queue === undefined ? undefined : `${options.queue}\u0000${subject}`;
    const sub: BusSubscription = { pattern, groupKey, handler, owner: this, active: true };
    this.#subs.add(sub);
    this.#bus.add(sub);
    return {
      unsubscribe: () => {
        this.#subs.delete(sub);
        this.#bus.remove(sub);
      },
    };
  }

  request(subject: string, data: Uint8Array, options: RequestOptions = {}): Promise<ReplyMessage> {
    if (this.#closing !== undefined) return Promise.reject(new TransportError('closed', 'connection closed'));
    const headers = options.headers ?? {};
    const tooLarge = this.#checkSize(data, headers);
    if (tooLarge !== undefined) return Promise.reject(tooLarge);
    const inbox = `_INBOX.${this.#id}.${++this.#inboxSeq}`;
    return new Promise<ReplyMessage>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (err: TransportError | undefined, reply?: ReplyMessage): void => {
        clearTimeout(timer);
        this.#pending.delete(fail);
        inboxSub.unsubscribe();
        if (err !== undefined) reject(err);
        else if (reply !== undefined) resolve(reply);
      };
      const fail = (err: TransportError): void => finish(err);
      const inboxSub = this.subscribe(inbox, (msg) => finish(undefined, { data: msg.data, headers: msg.headers }));
      this.#pending.add(fail);
      if (this.#bus.route(subject, data, headers, inbox) === 0) {
        finish(new TransportError('no_responders', `no responders for ${subject}`));
        return;
      }
      const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
      timer = setTimeout(() => finish(new TransportError('timeout', `request to ${subject} timed out after ${timeoutMs} ms`)), timeoutMs);
    });
  }

  publish(subject: string, data: Uint8Array, headers: Headers = {}): void {
    if (this.#closed) throw new TransportError('closed', 'connection closed');
    const tooLarge = this.#checkSize(data, headers);
    if (tooLarge !== undefined) throw tooLarge;
    this.#bus.route(subject, data, headers, undefined);
  }

  /** Resolves once everything queued on the bus so far has been delivered (stronger than NATS' flush). */
  async flush(): Promise<void> {
    if (this.#closed) throw new TransportError('closed', 'connection closed');
    await this.#bus.whenIdle();
  }

  /**
   * Drains like NATS: refuses new subscriptions and requests at once, lets messages already queued reach their
   * handlers (which may still respond), then unsubscribes everything and fails pending requests with `closed`.
   */
  close(): Promise<void> {
    this.#closing ??= this.#bus.whenIdle().then(() => {
      for (const sub of this.#subs) this.#bus.remove(sub);
      this.#subs.clear();
      this.#closed = true;
      for (const fail of [...this.#pending]) fail(new TransportError('closed', 'connection closed'));
    });
    return this.#closing;
  }

  #checkSize(data: Uint8Array, headers: Headers): TransportError | undefined {
    const size = messageSize(data, headers);
    if (size <= this.#bus.maxPayload) return undefined;
    return new TransportError('too_large', `message of ${size} bytes exceeds max payload ${this.#bus.maxPayload}`);
  }
}
