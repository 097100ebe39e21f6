import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerApi } from './inspector-api.ts';
import { InspectorData } from './inspector-data.ts';
import { InspectorError } from './inspector-error.ts';
import { staticAssets } from './static-assets.ts';
import { loopbackHosts, loopbackRefusal } from '@baton/protocol';

export interface InspectorOptions {
  /** The data directory; its event log is opened read-only unless `data` is given. */
  readonly dataDir: string;
  /** Read through this instead (e.g. over the log of a daemon in the same process). */
  readonly data?: InspectorData;
  /** Default 127.0.0.1: the page is for the machine it runs on. */
  readonly host?: string;
  /** Default 0: any free port. */
  readonly port?: number;
}

/** A running inspector. */
export interface InspectorServer {
  /** `http://host:port/`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes the event log if it opened it. */
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, head: boolean): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(head ? undefined : body);
}

function sendJson(res: ServerResponse, status: number, value: unknown, head: boolean): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), head);
}

async function handle(data: InspectorData, assets: ReturnType<typeof staticAssets>, hosts: ReadonlySet<string> | null, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const head = req.method === 'HEAD';
  // A page elsewhere reaching this loopback-bound inspector (DNS rebinding, another site's page) is refused.
  const refusal = loopbackRefusal(hosts, req.headers);
  if (refusal !== null) {
    sendJson(res, 403, { error: refusal }, head);
    return;
  }
  if (req.method !== 'GET' && !head) {
    res.setHeader('allow', 'GET, HEAD');
    sendJson(res, 405, { error: `the inspector is read-only: ${req.method ?? '?'} is not allowed` }, false);
    return;
  }
  const { pathname } = new URL(req.url ?? '/', 'http://inspector.invalid');
  if (pathname.startsWith('/api/')) {
    try {
      sendJson(res, 200, await answerApi(data, pathname), head);
    } catch (err) {
      if (err instanceof InspectorError) sendJson(res, err.status, { error: err.message }, head);
      else sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) }, head);
    }
    return;
  }
  // The page's own routes (`/s/<session>`) are the page too; it reads the path and asks the API.
  const asset = assets.get(pathname.startsWith('/s/') ? '/' : pathname);
  if (asset === undefined) {
    sendJson(res, 404, { error: `nothing at ${pathname}` }, head);
    return;
  }
  send(res, 200, asset.type, await readFile(asset.file), head);
}

/**
 * Serves the inspector: the page, its scripts and styles, and the JSON API over the data directory, read-only.
 *
 * @throws InspectorError 404 when the data directory holds no event log; the listen error when the port is taken.
 */
export async function startInspector(options: InspectorOptions): Promise<InspectorServer> {
  const data = options.data ?? InspectorData.open(options.dataDir);
  const assets = staticAssets();
  let hosts: ReadonlySet<string> | null = null;
  const server = createServer((req, res) => {
    handle(data, assets, hosts, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) }, false);
      else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolveListen();
      });
    });
  } catch (err) {
    if (options.data === undefined) await data.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  hosts = loopbackHosts(host, port);
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    port,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      if (options.data === undefined) await data.close();
    },
  };
}
