import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { StringDecoder } from 'node:string_decoder';

/** Parses SSE bytes as they arrive (chunk boundaries anywhere, multi-byte characters split across reads included). */
export class SseEvents {
  readonly #decoder = new StringDecoder('utf8');
  readonly #parser;

  constructor(onEvent: (event: EventSourceMessage) => void) {
    this.#parser = createParser({ onEvent });
  }

  feed(chunk: Buffer): void {
    this.#parser.feed(this.#decoder.write(chunk));
  }
}

/** The JSON of an event's data, or null when it is not JSON. */
export function eventJson(event: EventSourceMessage): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
