/** Relaying an upstream answer held back from the agent, and reading what kind of body a reply has. */
import type { ServerResponse } from 'node:http';
import type { UpstreamCall } from './upstream-call.ts';

export function isEventStream(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && value.trimStart().toLowerCase().startsWith('text/event-stream');
}

/** An upstream error held back from the agent (read whole, so it can still be relayed as it came). */
export interface Refusal {
  readonly status: number;
  readonly headers: Record<string, string | string[]>;
  readonly body: Buffer;
}

export function relay(res: ServerResponse, refusal: Refusal): void {
  if (res.destroyed) return;
  res.writeHead(refusal.status, refusal.headers);
  res.end(refusal.body);
}

/** Reads a reply body up to `limit` bytes (the rest is dropped). */
export async function readAtMost(upstream: UpstreamCall, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  await upstream.consume((chunk) => {
    if (size < limit) chunks.push(chunk.subarray(0, limit - size));
    size += chunk.length;
    return true;
  });
  return Buffer.concat(chunks);
}
