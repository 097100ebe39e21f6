import {
  decodeReply,
  encodingFromHeaders,
  type Encoding,
  PublishedEventSchema,
  type PublishedEvent,
} from '@baton/protocol';
import type { InboundMessage, Transport, TransportSubscription } from './transport/transport.ts';

export interface SessionEventStreamOptions {
  /** Called with a message that is not a valid session event (it is skipped). Default: skip silently. */
  readonly onInvalid?: (err: unknown, msg: InboundMessage) => void;
}

/**
 * The events of one session as an async iterable. It subscribes when constructed (so nothing published after the
 * call is missed), buffers events until they are read, and ends when `stop()` is called or a `for await` loop exits.
 * Events are decoded in the encoding their `content-type` header names (JSON for `application/json`, MessagePack
 * otherwise, trying the other encoding when that fails) and validated; invalid or unknown events are skipped.
 */
export class SessionEventStream implements AsyncIterable<PublishedEvent> {
  readonly #sub: TransportSubscription;
  readonly #buffer: PublishedEvent[] = [];
  readonly #readers: ((result: IteratorResult<PublishedEvent>) => void)[] = [];
  #stopped = false;

  constructor(transport: Transport, subject: string, options: SessionEventStreamOptions = {}) {
    this.#sub = transport.subscribe(subject, (msg) => {
      let event: PublishedEvent;
      try {
        event = PublishedEventSchema.parse(decodeEvent(msg));
      } catch (err) {
        options.onInvalid?.(err, msg);
        return;
      }
      this.#push(event);
    });
  }

  /** Unsubscribes and ends the iteration; events already buffered are dropped. Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#sub.unsubscribe();
    this.#buffer.length = 0;
    for (const read of this.#readers.splice(0)) read({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterator<PublishedEvent> {
    return {
      next: () => this.#next(),
      return: () => {
        this.stop();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  #next(): Promise<IteratorResult<PublishedEvent>> {
    const event = this.#buffer.shift();
    if (event !== undefined) return Promise.resolve({ done: false, value: event });
    if (this.#stopped) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => this.#readers.push(resolve));
  }

  #push(event: PublishedEvent): void {
    if (this.#stopped) return;
    const read = this.#readers.shift();
    if (read !== undefined) read({ done: false, value: event });
    else this.#buffer.push(event);
  }
}

function decodeEvent(msg: InboundMessage): unknown {
  const encoding: Encoding = encodingFromHeaders(msg.headers);
  try {
    return decodeReply(msg.data, encoding);
  } catch (err) {
    // A publisher that forgot the header: the other encoding may still read it.
    try {
      return decodeReply(msg.data, encoding === 'json' ? 'msgpack' : 'json');
    } catch {
      throw err;
    }
  }
}
