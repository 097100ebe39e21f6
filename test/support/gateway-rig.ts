import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, MemoryBus, MemoryTransport, NatsTransport, type Transport } from '@baton/client';
import { BatonGateway, loadOwnerSecret, type GatewayLogger, type GatewayOptions } from '@baton/gateway';
import type { Message } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog, type DaemonLogger, type DaemonOptions } from '@baton/runtime';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type LoopbackModelOptions, type NatsServerHandle } from '@baton/testing';
import { DAEMON_AUTH, PROJECT_USERS, documentedPermissions, withPasswords } from './nats-permissions.ts';
import { TEST_TAIL } from './conversation.ts';

/** One HTTP exchange as it crossed the tap: what the gateway sent upstream and what the upstream answered. */
export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  status: number | null;
  responseHeaders: IncomingHttpHeaders | null;
  /** The response body chunks as the upstream sent them. */
  readonly chunks: Buffer[];
  /** Set when the upstream's response ended (`'end'`) or broke (`'error'`). */
  ended: 'end' | 'error' | null;
  /** Set when the gateway went away before the exchange ended. */
  aborted: boolean;
}

/**
 * A recording pass-through HTTP proxy in front of an upstream: forwards every request to `target` unchanged and
 * records the bytes in both directions, so a test can compare what the agent got with what the upstream sent.
 */
export interface Tap {
  readonly url: string;
  readonly exchanges: readonly Exchange[];
  close(): Promise<void>;
}

/** Headers that belong to one connection, not to the message. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

export async function startTap(target: string): Promise<Tap> {
  const base = new URL(target);
  const exchanges: Exchange[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const ex: Exchange = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks), status: null, responseHeaders: null, chunks: [], ended: null, aborted: false };
      exchanges.push(ex);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !HOP.has(k)));
      const out = httpRequest({ host: base.hostname, port: base.port, method: ex.method, path: ex.path, headers }, (up) => {
        ex.status = up.statusCode ?? 0;
        ex.responseHeaders = up.headers;
        res.writeHead(ex.status, Object.fromEntries(Object.entries(up.headers).filter(([k]) => !HOP.has(k))));
        res.flushHeaders();
        up.on('data', (c: Buffer) => {
          ex.chunks.push(c);
          res.write(c);
        });
        up.on('end', () => {
          ex.ended = 'end';
          res.end();
        });
        up.on('error', () => {
          ex.ended = 'error';
          res.destroy();
        });
      });
      out.on('error', () => {
        ex.ended ??= 'error';
        res.destroy();
      });
      res.on('close', () => {
        if (ex.ended === null) {
          ex.aborted = true;
          out.destroy();
        }
      });
      out.end(ex.body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/v1`,
    exchanges,
    close: () => closeServer(server, sockets),
  };
}

export async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

export async function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A daemon (in-process or over a real nats-server), its LMDB log, a loopback model behind a tap, and a gateway. */
export interface GatewayRig {
  readonly model: LoopbackModel;
  readonly tap: Tap;
  readonly dataDir: string;
  readonly log: LmdbEventLog;
  readonly daemon: BatonDaemon;
  readonly client: BatonClient;
  /** The transport `client` uses (a test may wrap it for a client of its own). */
  readonly clientTransport: Transport;
  readonly gateway: BatonGateway;
  /** The gateway's ownership secret (`gateway-owner.secret` in the data dir): another gateway on the rig's daemon needs it. */
  readonly ownerSecret: Buffer;
  /** `http://127.0.0.1:<port>` of the gateway (no `/v1`). */
  readonly origin: string;
  /** The nats-server's URL (null: the rig runs on an in-memory bus). */
  readonly natsUrl: string | null;
  /** The base URL naming session `sid`: `<origin>/s/<sid>/v1`. */
  sessionURL(sid: string): string;
  /** Stops everything; `beforeRemove` runs once all is closed, before the data dir is removed. */
  stop(options?: { beforeRemove?: () => void | Promise<void> }): Promise<void>;
}

export interface GatewayRigOptions {
  readonly nats?: boolean;
  /**
   * With `nats`: the server runs docs/operations.md's permission recipe, the daemon connects as its daemon user and
   * the gateway with this project's user and reply inboxes (its sessions belong to that project).
   */
  readonly natsProject?: keyof typeof PROJECT_USERS;
  readonly model?: Partial<LoopbackModelOptions>;
  readonly gateway?: Partial<Omit<GatewayOptions, 'client'>>;
  readonly gatewayLogger?: GatewayLogger;
  readonly daemonLogger?: DaemonLogger;
  readonly daemon?: Partial<DaemonOptions>;
  /** The API key the daemon's writers use (unless `agentWriterKeys`). */
  readonly writerKey?: string;
  /** The gateway hands each agent's key to the daemon for its session's writers (as `baton up --writer-key agent`). */
  readonly agentWriterKeys?: boolean;
}

export async function startGatewayRig(options: GatewayRigOptions = {}): Promise<GatewayRig> {
  const model = await startLoopbackModel({ mode: 'scripted', ...options.model });
  const tap = await startTap(model.baseURL);
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-gateway-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  let nats: NatsServerHandle | null = null;
  let daemonTransport: Transport;
  let clientTransport: Transport;
  if (options.nats === true && options.natsProject !== undefined) {
    const restore = withPasswords();
    try {
      nats = await startNatsServer({ config: await documentedPermissions() });
    } finally {
      restore();
    }
    const user = PROJECT_USERS[options.natsProject];
    daemonTransport = await NatsTransport.connect({ servers: nats.url, auth: DAEMON_AUTH });
    clientTransport = await NatsTransport.connect({ servers: nats.url, auth: user.auth, inboxPrefix: user.inboxPrefix });
  } else if (options.nats === true) {
    nats = await startNatsServer();
    daemonTransport = await NatsTransport.connect({ servers: nats.url });
    clientTransport = await NatsTransport.connect({ servers: nats.url });
  } else {
    const bus = new MemoryBus();
    daemonTransport = new MemoryTransport(bus);
    clientTransport = new MemoryTransport(bus);
  }
  const daemon = BatonDaemon.start({
    transport: daemonTransport,
    log,
    dataDir,
    poolSize: 2,
    model: { baseURL: model.baseURL, apiKey: options.writerKey ?? 'daemon-writer-key', maxRetries: 0, timeoutMs: 10_000 },
    anthropic: { baseURL: model.url, apiKey: options.writerKey ?? 'daemon-writer-key', maxRetries: 0, timeoutMs: 10_000 },
    tail: TEST_TAIL,
    ...(options.daemonLogger !== undefined ? { logger: options.daemonLogger } : {}),
    ...options.daemon,
  });
  const client = new BatonClient(clientTransport);
  const ownerSecret = loadOwnerSecret(dataDir);
  const gateway = await BatonGateway.start({
    upstream: tap.url,
    client,
    ...(options.natsProject !== undefined ? { projectId: options.natsProject } : {}),
    ownerSecret,
    ...(options.gatewayLogger !== undefined ? { logger: options.gatewayLogger } : {}),
    ...(options.agentWriterKeys === true ? { writerKeys: (sessionId: string, key: string) => daemon.sessions.setWriterKey(sessionId, key) } : {}),
    ...options.gateway,
  });
  const origin = gateway.baseURL.replace(/\/v1$/, '');
  return {
    model,
    tap,
    dataDir,
    log,
    daemon,
    client,
    clientTransport,
    gateway,
    ownerSecret,
    origin,
    natsUrl: nats?.url ?? null,
    sessionURL: (sid) => `${origin}/s/${sid}/v1`,
    async stop(stopOptions = {}) {
      await gateway.close();
      await daemon.stop();
      await clientTransport.close();
      await daemonTransport.close();
      await log.close();
      await tap.close();
      await model.close();
      if (nats !== null) await nats.stop();
      await stopOptions.beforeRemove?.();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every message the daemon session `sid` recorded, in log order (the `messages.appended` records). */
export function recordedMessages(log: LmdbEventLog, sid: string): Message[] {
  const out: Message[] = [];
  for (const r of log.read(`session/${sid}`)) {
    if (r.type === 'messages.appended') out.push(...(r.payload as { messages: Message[] }).messages);
  }
  return out;
}

/** The record types of session `sid`'s stream, in order. */
export function recordTypes(log: LmdbEventLog, sid: string): string[] {
  return [...log.read(`session/${sid}`)].map((r) => r.type);
}

/** The agent's tools (read_file / write_file / bash): fork mode maps Baton's writer tools onto them. */
export const GATEWAY_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Write a file.',
      parameters: { type: 'object', properties: { file_path: { type: 'string' }, text: { type: 'string' } }, required: ['file_path', 'text'] },
    },
  },
  {
    type: 'function',
    function: { name: 'bash', description: 'Run a command.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  },
];

/** Reads a fetch response body chunk by chunk, keeping the chunks as they arrived. */
export async function readChunks(res: Response, onChunk?: (chunk: Buffer, index: number) => void): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  if (res.body === null) return chunks;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    const chunk = Buffer.from(next.value);
    chunks.push(chunk);
    onChunk?.(chunk, chunks.length - 1);
  }
  return chunks;
}

/** Waits until `check` holds, polling every 10 ms, at most `ms`. */
export async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One request a {@link RawUpstream} got: its body, and whether its connection closed before the answer ended. */
export interface RawRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  closedEarly: boolean;
}

/** A hand-written upstream (node:http) for what the loopback cannot do: slow streams, mid-stream drops, compression. */
export interface RawUpstream {
  readonly url: string;
  readonly requests: readonly RawRequest[];
  close(): Promise<void>;
}

export async function startRawUpstream(handler: (req: RawRequest, res: ServerResponse) => void | Promise<void>): Promise<RawUpstream> {
  const requests: RawRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw: RawRequest = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks), closedEarly: false };
      requests.push(raw);
      res.on('close', () => {
        if (!res.writableFinished) raw.closedEarly = true;
      });
      void Promise.resolve(handler(raw, res)).catch(() => res.destroy());
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/v1`, requests, close: () => closeServer(server, sockets) };
}

/** One `chat.completion.chunk` SSE event. */
export function sseChunk(delta: object, finish: string | null = null, extra: object = {}): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
}

/** The usage-only SSE event a stream ends with when usage was asked for. */
export function sseUsage(prompt: number, completion: number): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } })}\n\n`;
}
