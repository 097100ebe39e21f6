import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SseEvent } from './responses-wire.ts';

const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Sends `body` as JSON unless the response is already gone. */
export function sendJson(res: ServerResponse, status: number, body: object, headers: Readonly<Record<string, string>> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Sends `events` as one Server-Sent Events response (an `event:` and a `data:` line each). */
export function sendSse(res: ServerResponse, events: readonly SseEvent[], headers: Readonly<Record<string, string>> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const e of events) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

/** The request body as text; `undefined` when it is over 64 MiB or unreadable. */
export function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(undefined));
  });
}
