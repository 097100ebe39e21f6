import type { Headers } from './transport.ts';

const encoder = new TextEncoder();

/**
 * Size NATS counts against `max_payload` for a message: the data plus the encoded header block
 * (`NATS/1.0\r\n`, one `key: value\r\n` line per header, a closing `\r\n`), or the data alone without headers.
 */
export function messageSize(data: Uint8Array, headers: Headers | undefined): number {
  if (headers === undefined) return data.length;
  const entries = Object.entries(headers);
  if (entries.length === 0) return data.length;
  let size = 'NATS/1.0\r\n'.length + 2;
  for (const [key, value] of entries) size += encoder.encode(`${key}: ${value}\r\n`).length;
  return data.length + size;
}
