import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream } from '../src/upstream.ts';

/** 64 KiB pieces, each filled with its own letter, so order and completeness show in the bytes. */
const PIECES = 16;
const PIECE = 64 * 1024;
const expected = Buffer.concat(Array.from({ length: PIECES }, (_, i) => Buffer.alloc(PIECE, 97 + i)));

describe('UpstreamCall', () => {
  let server: Server;
  let upstream: Upstream;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        let i = 0;
        const more = (): void => {
          while (i < PIECES) {
            const piece = expected.subarray(i * PIECE, (i + 1) * PIECE);
            i++;
            if (!res.write(piece)) {
              res.once('drain', more);
              return;
            }
          }
          res.end();
        };
        more();
        return;
      }
      res.writeHead(201, { 'content-type': 'text/plain', 'x-echo': req.headers['x-echo'] ?? '' });
      req.pipe(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    upstream = new Upstream(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { timeoutMs: 30_000 });
  });

  afterAll(async () => {
    await upstream.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('hands on status, headers and a body that was complete before anyone read it', async () => {
    const call = upstream.call('POST', '/echo', { 'x-echo': 'yes' }, Buffer.from('hello upstream'));
    await call.started;
    // The reply is read only after a while: its bytes wait in the call.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const chunks: Buffer[] = [];
    await call.consume((chunk) => chunks.push(chunk) > 0);
    expect(call.statusCode).toBe(201);
    expect(call.headers['x-echo']).toBe('yes');
    expect(Buffer.concat(chunks).toString()).toBe('hello upstream');
  });

  it('holds the upstream while the sink is backed up and delivers every byte in order once resumed', async () => {
    const call = upstream.call('GET', '/big', {}, null);
    await call.started;
    const chunks: Buffer[] = [];
    let pauses = 0;
    await call.consume((chunk) => {
      chunks.push(chunk);
      // Backed up after every chunk: the next one only comes once resumed.
      pauses++;
      setImmediate(() => call.resume());
      return false;
    });
    expect(pauses).toBe(chunks.length);
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
  });

  it('ends with the sink’s error when the sink throws', async () => {
    const call = upstream.call('GET', '/big', {}, null);
    await call.started;
    await expect(
      call.consume(() => {
        throw new Error('sink failed');
      }),
    ).rejects.toThrow('sink failed');
  });

  it('an aborted call rejects and says so', async () => {
    const before = upstream.call('POST', '/echo', {}, Buffer.from('never sent'));
    before.abort();
    await expect(before.started).rejects.toThrow();
    expect(before.aborted).toBe(true);

    const during = upstream.call('GET', '/big', {}, null);
    await during.started;
    const consumed = during.consume(() => {
      during.abort(new Error('agent gone'));
      return true;
    });
    await expect(consumed).rejects.toThrow('agent gone');
  });
});
