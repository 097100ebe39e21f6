import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Registry } from 'prom-client';

/** An HTTP endpoint serving Prometheus text at `GET /metrics`. */
export interface MetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  readonly url: string;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Served as one exposition; a metric name may appear in only one of them. */
  readonly registries: readonly Registry[];
}

/**
 * Serves the registries' metrics (merged once, so a name registered twice fails here rather than at a scrape) on
 * `GET /metrics`; any other path is 404, any other method 405. Resolves once the port is bound.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const registry = Registry.merge([...options.registries]);
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics failed: ${err instanceof Error ? err.message : String(err)}\n`);
      },
    );
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
