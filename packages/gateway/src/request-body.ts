import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body the gateway reads (the provider's own limit is usually lower). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads a request body whole, refusing one above `MAX_BODY_BYTES`. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body above ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    // A body that came in one read is used as it is (no copy).
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

/**
 * Whether a request's body is declared as JSON (`application/json`, or a `+json` type), the only kind the provider
 * APIs take. A request with no body (no length, not chunked) declares nothing and passes.
 */
export function declaresJson(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  if (type === undefined) return req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
  const essence = (type.split(';')[0] ?? '').trim().toLowerCase();
  return essence === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(essence);
}

/** An OpenAI-shaped error the gateway itself answers (never with a credential in it). */
export function sendError(res: ServerResponse, status: number, message: string, code: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code } }));
}
