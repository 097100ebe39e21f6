import { Packr, Unpackr } from 'msgpackr';
import { z } from 'zod';
import type { Headers } from './headers.ts';
import { findNonPlain, toPlain } from './plain-value.ts';
import { ProtocolError } from './protocol-error.ts';
import { makeWellFormed } from './well-formed.ts';

/**
 * Payload encodings of protocol v1. MessagePack is the default; a request with the header
 * `content-type: application/json` is JSON and is answered in JSON. An empty payload decodes to `{}` in both
 * encodings (so `checkpoint`, `status`, … may be sent with no body at all).
 */
export const EncodingSchema = z.enum(['msgpack', 'json']);
export type Encoding = z.infer<typeof EncodingSchema>;

export const JSON_CONTENT_TYPE = 'application/json';

/** A decoded payload and the encoding it came in, which is also the encoding of the reply. */
export interface DecodedPayload {
  readonly encoding: Encoding;
  readonly value: unknown;
}

// Plain MessagePack only: no records, no extension types (see plain-value.ts for what toPlain() adds).
const packr = new Packr({ useRecords: false, moreTypes: false });
// `auto` (supported by msgpackr 2.x, missing from its typings): int64 within 2^53 as a number, beyond as a bigint,
// so large integers are never silently rounded.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'auto' as 'number' });
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The encoding a message's headers ask for: `json` when `content-type` (any letter case) is `application/json`,
 * parameters such as `; charset=utf-8` allowed; `msgpack` otherwise.
 */
export function encodingFromHeaders(headers: Headers | undefined): Encoding {
  if (headers === undefined) return 'msgpack';
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== 'content-type') continue;
    const mediaType = value.split(';', 1)[0]?.trim().toLowerCase();
    return mediaType === JSON_CONTENT_TYPE ? 'json' : 'msgpack';
  }
  return 'msgpack';
}

/**
 * Headers to send with a payload in `encoding`: `content-type: application/json` for JSON, none for MessagePack
 * (the default needs no header, which keeps requests from plain NATS clients simple).
 */
export function contentTypeHeaders(encoding: Encoding): Headers {
  return encoding === 'json' ? { 'content-type': JSON_CONTENT_TYPE } : {};
}

/**
 * Decodes a request payload in the encoding its headers select. Throws `ProtocolError('decode_error')` when the
 * bytes are not one valid MessagePack value (including trailing bytes after it, the reserved byte 0xc1 and extension
 * types) or not valid UTF-8 JSON. The value is not validated further: pass it to `parseRequest`. (msgpackr renames a
 * map key `__proto__` to `__proto_` as a guard against prototype pollution; JSON keeps it as an own key.)
 * Take the reply encoding from `encodingFromHeaders(headers)` first, so a `decode_error` is answered in it too.
 */
export function decodeRequest(data: Uint8Array, headers: Headers | undefined): DecodedPayload {
  const encoding = encodingFromHeaders(headers);
  return { encoding, value: makeWellFormed(decodePayload(data, encoding)) };
}

/** Decodes a reply (or event) payload in a known encoding; same rules and errors as `decodeRequest`. */
export function decodeReply(data: Uint8Array, encoding: Encoding): unknown {
  return decodePayload(data, encoding);
}

/**
 * Encodes a reply. MessagePack output is plain (string-keyed maps, arrays, int64 for large integers, no extension
 * types, `undefined` members omitted); JSON output is UTF-8 `JSON.stringify` (bigints become numbers).
 */
export function encodeReply(value: unknown, encoding: Encoding): Uint8Array {
  return encodePayload(value, encoding);
}

/** Encodes a request; same output rules as `encodeReply`. */
export function encodeRequest(value: unknown, encoding: Encoding): Uint8Array {
  return encodePayload(value, encoding);
}

function encodePayload(value: unknown, encoding: Encoding): Uint8Array {
  if (encoding === 'json') {
    return textEncoder.encode(JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? Number(item) : item)));
  }
  const packed = packr.pack(toPlain(value) ?? null);
  releaseLargePackBuffer(packr, packed.length);
  return packed;
}

/**
 * msgpackr packs into one buffer it keeps for the next value, grown to the largest value so far (it lets go only past
 * 1 GiB). Called after each pack: after a huge value (a 50 MB tool output), `packr` gets a small buffer again, so that
 * memory comes back once the packed bytes are sent or written.
 */
export function releaseLargePackBuffer(packr: Packr, packedBytes: number): void {
  if (packedBytes > LARGE_PACK_BYTES) packr.useBuffer(smallPackBuffer());
}

/** A value packed above this size leaves msgpackr's buffer replaced by a new one of `SMALL_PACK_BUFFER` bytes. */
const LARGE_PACK_BYTES = 4 * 1024 * 1024;
const SMALL_PACK_BUFFER = 64 * 1024;

/** A buffer msgpackr can pack into: a Node `Buffer` where there is one (msgpackr writes strings with its methods). */
function smallPackBuffer(): Uint8Array {
  return typeof Buffer === 'function' ? Buffer.allocUnsafeSlow(SMALL_PACK_BUFFER) : new Uint8Array(SMALL_PACK_BUFFER);
}

function decodePayload(data: Uint8Array, encoding: Encoding): unknown {
  if (data.length === 0) return {};
  if (encoding === 'json') {
    try {
      return JSON.parse(textDecoder.decode(data)) as unknown;
    } catch (err) {
      throw new ProtocolError('decode_error', `invalid JSON: ${errorMessage(err)}`, undefined, { cause: err });
    }
  }
  let value: unknown;
  try {
    value = unpackr.unpack(data);
  } catch (err) {
    throw new ProtocolError('decode_error', `invalid MessagePack: ${errorMessage(err)}`, undefined, { cause: err });
  }
  const nonPlain = findNonPlain(value);
  if (nonPlain !== null) {
    throw new ProtocolError('decode_error', `invalid MessagePack: not plain data (${nonPlain})`);
  }
  return value;
}

/** The decoder's message, cut short: msgpackr quotes the decoded value in some messages, which may be megabytes. */
function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
