import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { chatRequestSchema, type ChatRequest } from './chat-request.ts';
import { extractiveStep } from './extractive/extractive-writer.ts';
import {
  completionBody,
  completionTexts,
  errorBody,
  resolveReply,
  streamChunks,
  type WireUsage,
} from './openai-wire.ts';
import { PrefixCache } from './prefix-cache.ts';
import type {
  ErrorSpec,
  LoopbackModel,
  LoopbackModelOptions,
  LoopbackStats,
  RecordedRequest,
  ReplySpec,
  Responder,
  ScriptStep,
} from './types.ts';

const MAX_BODY_BYTES = 64 * 1024 * 1024;
// A function step may return another function; bound the chain so a buggy responder cannot loop forever.
const MAX_STEP_DEPTH = 16;
/** A step that answers by itself (functions and delays resolved). */
type TerminalStep = Exclude<ScriptStep, Responder | { readonly delayMs: number }>;

const EXHAUSTED: ErrorSpec = { status: 500, message: 'loopback script exhausted', type: 'server_error', code: 'loopback_script_exhausted' };

/** A cancellable set of sleeps: `close()` wakes every sleeper so no timer outlives the server. */
class Sleeps {
  readonly #pending = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = { timer: setTimeout(() => { this.#pending.delete(entry); resolve(); }, ms), wake: resolve };
      this.#pending.add(entry);
    });
  }
  wakeAll(): void {
    for (const entry of this.#pending) { clearTimeout(entry.timer); entry.wake(); }
    this.#pending.clear();
  }
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Readonly<Record<string, string>> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
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

/** Serialized prompt pieces: model + tools first, then each message exactly as sent (cache key order). */
function promptPieces(body: ChatRequest): string[] {
  return [JSON.stringify({ model: body.model, tools: body.tools ?? [] }), ...body.messages.map((m) => JSON.stringify(m))];
}

/**
 * Starts a loopback OpenAI-compatible model server on 127.0.0.1 serving `POST /v1/chat/completions` (JSON, or SSE
 * when `stream: true`) and `GET /v1/models`. Answers come from the script, then the responder, then the mode's
 * default (see {@link LoopbackModelOptions.mode}). Every completion carries real o200k `usage` with simulated prefix
 * cache hits. Bad input gets an OpenAI-shaped 400; an internal failure a 500 — the server never crashes.
 */
export async function startLoopbackModel(options: LoopbackModelOptions): Promise<LoopbackModel> {
  const latencyMs = options.latencyMs ?? 0;
  const now = options.now ?? Date.now;
  const cache = new PrefixCache({ blockTokens: options.cacheBlockTokens ?? 128, minCachedTokens: options.minCachedTokens ?? 1024 });
  const queue: ScriptStep[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const sleeps = new Sleeps();
  const modelsSeen = new Set<string>(['loopback']);
  let responder: Responder | undefined;
  let stats: LoopbackStats = { calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
  let closed = false;

  async function resolveStep(step: ScriptStep, request: RecordedRequest, depth = 0): Promise<TerminalStep> {
    if (depth > MAX_STEP_DEPTH) return { error: { status: 500, message: 'loopback responder recursion too deep' } };
    if (typeof step === 'function') return await resolveStep(await step(request), request, depth + 1);
    if ('delayMs' in step) {
      await sleeps.sleep(step.delayMs);
      return await resolveStep(step.then, request, depth + 1);
    }
    return step;
  }

  function nextStep(request: RecordedRequest): ScriptStep {
    const scripted = queue.shift();
    if (scripted !== undefined) return scripted;
    if (responder !== undefined) return responder;
    if (options.mode === 'extractive') return extractiveStep(request);
    return { error: EXHAUSTED };
  }

  function sendReply(res: ServerResponse, request: RecordedRequest, spec: ReplySpec): void {
    const reply = resolveReply(spec, request.index);
    const measure = cache.observe(promptPieces(request.body));
    const { texts, reasoning } = completionTexts(reply);
    const reasoningTokens = reasoning === '' ? 0 : cache.count(reasoning);
    const completionTokens = texts.reduce((sum, t) => sum + cache.count(t), 0) + reasoningTokens;
    const usage: WireUsage = {
      prompt_tokens: measure.promptTokens,
      completion_tokens: completionTokens,
      total_tokens: measure.promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: measure.cachedTokens },
      completion_tokens_details: { reasoning_tokens: reasoningTokens },
    };
    stats = {
      calls: stats.calls + 1,
      promptTokens: stats.promptTokens + measure.promptTokens,
      cachedTokens: stats.cachedTokens + measure.cachedTokens,
      completionTokens: stats.completionTokens + completionTokens,
    };
    const meta = { id: `chatcmpl-loopback-${request.index}`, created: Math.floor(now() / 1000), model: request.body.model };
    if (request.body.stream !== true) {
      sendJson(res, 200, completionBody(meta, reply, usage));
      return;
    }
    const includeUsage = request.body.stream_options?.include_usage === true;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const chunk of streamChunks(meta, reply, usage, includeUsage)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  async function handleCompletion(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const rawBody = await readBody(req);
    if (rawBody === undefined) {
      sendJson(res, 413, errorBody({ status: 413, message: 'request body too large or unreadable', type: 'invalid_request_error' }));
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawBody);
    } catch (err) {
      sendJson(res, 400, errorBody({ status: 400, message: `invalid JSON body: ${(err as Error).message}`, code: 'invalid_json' }));
      return;
    }
    const check = chatRequestSchema.safeParse(parsed);
    if (!check.success) {
      const detail = check.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
      sendJson(res, 400, errorBody({ status: 400, message: `invalid chat completion request: ${detail}`, code: 'invalid_request' }));
      return;
    }
    // The untransformed parse result is kept (zod output reorders keys), so the cache sees the bytes as sent.
    const body = parsed as ChatRequest;
    modelsSeen.add(body.model);
    const request: RecordedRequest = { index: requests.length, method: req.method ?? 'POST', path, headers: req.headers, rawBody, body };
    requests.push(request);
    const step = await resolveStep(nextStep(request), request);
    if (closed || res.destroyed) return;
    if ('stall' in step) return;
    if ('drop' in step) {
      req.socket.destroy();
      return;
    }
    await sleeps.sleep(latencyMs);
    if (closed || res.destroyed) return;
    if ('error' in step) sendJson(res, step.error.status, errorBody(step.error), step.error.headers);
    else sendReply(res, request, step.reply);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) {
      await handleCompletion(req, res, path);
    } else if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      req.resume();
      const data = [...modelsSeen].map((id) => ({ id, object: 'model', created: 0, owned_by: 'baton-loopback' }));
      sendJson(res, 200, { object: 'list', data });
    } else {
      req.resume();
      sendJson(res, 404, errorBody({ status: 404, message: `no route for ${req.method ?? '?'} ${path}`, code: 'unknown_url' }));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      sendJson(res, 500, errorBody({ status: 500, message: `loopback internal error: ${String(err)}` }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('loopback model: no TCP address');
  const url = `http://127.0.0.1:${address.port}`;
  let closing: Promise<void> | undefined;

  return {
    url,
    baseURL: `${url}/v1`,
    port: address.port,
    requests,
    script: (...steps) => void queue.push(...steps),
    enqueue: (...steps) => void queue.push(...steps),
    pending: () => queue.length,
    setResponder: (fn) => {
      responder = fn;
    },
    stats: () => stats,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      responder = undefined;
      stats = { calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
      cache.clear();
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        sleeps.wakeAll();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
