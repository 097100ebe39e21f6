import { MAX_APPEND_MESSAGES, encodeRequest, type Encoding, type Message } from '@baton/protocol';

/** Bytes left under the max payload for headers and framing. */
const HEADROOM = 1024;

/** One request of an append split to fit: an `append` (encoded), or one message too large alone, to send in parts. */
export type AppendBatch = { readonly kind: 'append'; readonly data: Uint8Array } | { readonly kind: 'upload'; readonly parts: readonly string[] };

/** The JSON text of an append request, cut into base64 parts each of which fits in a `part` request. */
function uploadParts(messages: readonly Message[], limit: number): string[] {
  const text = Buffer.from(JSON.stringify({ messages }), 'utf8');
  // base64 takes 4 characters per 3 bytes; the rest of the part request is a few dozen bytes.
  const size = Math.max(3, Math.floor((limit - 256) / 4) * 3);
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += size) parts.push(text.subarray(at, at + size).toString('base64'));
  return parts;
}

/**
 * Splits an append so that no request is over `maxPayload`: consecutive messages in `append` requests of at most
 * `MAX_APPEND_MESSAGES` messages and `maxPayload` bytes, in order, and a message too large alone in an upload of
 * parts. The common case (everything fits in one request) encodes the request once.
 */
export function appendBatches(messages: readonly Message[], encoding: Encoding, maxPayload: number): AppendBatch[] {
  const limit = maxPayload - HEADROOM;
  const whole = encodeRequest({ messages }, encoding);
  if (whole.length <= limit && messages.length <= MAX_APPEND_MESSAGES) return [{ kind: 'append', data: whole }];
  const batches: AppendBatch[] = [];
  let pending: Message[] = [];
  let pendingBytes = 0;
  const flush = (): void => {
    if (pending.length > 0) batches.push({ kind: 'append', data: encodeRequest({ messages: pending }, encoding) });
    pending = [];
    pendingBytes = 0;
  };
  for (const message of messages) {
    // A message's share of a request: its own request's size less that request's framing (a few bytes, counted once).
    const size = encodeRequest({ messages: [message] }, encoding).length;
    if (size > limit) {
      flush();
      batches.push({ kind: 'upload', parts: uploadParts([message], limit) });
      continue;
    }
    if (pending.length > 0 && (pendingBytes + size > limit || pending.length >= MAX_APPEND_MESSAGES)) flush();
    pending.push(message);
    pendingBytes += size;
  }
  flush();
  return batches;
}
