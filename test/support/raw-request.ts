import { request } from 'node:http';

/** What a raw request got back: the status and the `error.code` of a JSON error body (null for any other body). */
export interface RawAnswer {
  readonly status: number;
  readonly code: string | null;
}

/**
 * Sends one HTTP request to 127.0.0.1:`port` exactly as given: the target is not normalised (absolute-form, `//`,
 * dot segments reach the server as written) and only `headers` are sent, so a test can play a browser, a form or a
 * hostile client.
 */
export function rawRequest(port: number, method: string, target: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let code: string | null = null;
        try {
          code = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string } }).error?.code ?? null;
        } catch {
          code = null;
        }
        resolve({ status: res.statusCode ?? 0, code });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
