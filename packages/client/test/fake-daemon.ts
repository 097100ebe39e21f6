import {
  contentTypeHeaders,
  decodeRequest,
  encodeReply,
  encodingFromHeaders,
  type Encoding,
  ProtocolError,
  subjects,
} from '@baton/protocol';
import type { Headers, Transport } from '../src/transport/transport.ts';

/** What the fake saw of one request. */
export interface SeenRequest {
  readonly subject: string;
  readonly encoding: Encoding;
  readonly body: unknown;
  readonly headers: Headers;
}

/** Raw reply bytes and headers, sent as they are. */
export interface RawReply {
  readonly raw: Uint8Array;
  readonly headers?: Headers;
}

/** A reply script: the value to send back (in the request's encoding), or a {@link RawReply}. */
export type Scripted = unknown;

/**
 * A tiny stand-in for the daemon: answers every protocol subject under `prefix` from `script(subject, body)`,
 * in the request's encoding, and records what it received. Decode failures are answered like the daemon would.
 */
export function startFakeDaemon(
  transport: Transport,
  script: (subject: string, body: unknown) => Scripted,
  prefix = 'baton',
): { readonly seen: SeenRequest[]; stop(): void } {
  const s = subjects(prefix);
  const seen: SeenRequest[] = [];
  const subs = [s.open, s.runtimeStatus, s.runtimeDrain, s.runtimeSessions, `${prefix}.v1.session.*.*`, `${prefix}.v1.p.>`].map((subject) =>
    transport.subscribe(subject, (msg) => {
      if (msg.subject.endsWith('.events')) return;
      // Known before decoding, so even a decode_error goes back in the caller's encoding.
      const encoding = encodingFromHeaders(msg.headers);
      try {
        const decoded = decodeRequest(msg.data, msg.headers);
        seen.push({ subject: msg.subject, encoding, body: decoded.value, headers: msg.headers });
        const reply = script(msg.subject, decoded.value);
        if (isRaw(reply)) msg.respond(reply.raw, reply.headers);
        else msg.respond(encodeReply(reply, encoding), contentTypeHeaders(encoding));
      } catch (err) {
        msg.respond(encodeReply(ProtocolError.from(err).toReply(), encoding), contentTypeHeaders(encoding));
      }
    }),
  );
  return { seen, stop: () => subs.forEach((sub) => sub.unsubscribe()) };
}

function isRaw(value: unknown): value is RawReply {
  return typeof value === 'object' && value !== null && (value as { raw?: unknown }).raw instanceof Uint8Array;
}
