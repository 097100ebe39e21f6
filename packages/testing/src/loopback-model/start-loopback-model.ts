import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { BreakpointCache } from './breakpoint-cache.ts';
import { extractiveStep } from './extractive/extractive-writer.ts';
import { readBody, sendJson } from './http-io.ts';
import {
  parseAnthropicRequest,
  parseChatRequest,
  parseCountTokensRequest,
  parseResponsesRequest,
  type ParsedRequest,
  type ParseResult,
} from './parse-request.ts';
import { PrefixCache } from './prefix-cache.ts';
import { Sleeps } from './sleeps.ts';
import type {
  ErrorSpec,
  LoopbackApi,
  LoopbackModel,
  LoopbackModelOptions,
  LoopbackStats,
  RecordedRequest,
  Responder,
  ScriptStep,
} from './types.ts';
import { chatPieces, errorBodyFor, responsesPieces, writeReply, type ReplyContext } from './write-reply.ts';
import { scaledTokens, toolOutputTokens, tooLongError } from './usage-scale.ts';

// A function step may return another function; bound the chain so a buggy responder cannot loop forever.
const MAX_STEP_DEPTH = 16;
/** A step that answers by itself (functions and delays resolved). */
type TerminalStep = Exclude<ScriptStep, Responder | { readonly delayMs: number }>;

const EXHAUSTED: ErrorSpec = { status: 500, message: 'loopback script exhausted', type: 'server_error', code: 'loopback_script_exhausted' };

/** A model endpoint: the API it speaks and how its body is checked. */
interface Route {
  readonly api: LoopbackApi;
  readonly parse: (value: unknown) => ParseResult<ParsedRequest>;
}

const ROUTES: Readonly<Record<string, Route>> = {
  '/v1/chat/completions': { api: 'openai-chat', parse: parseChatRequest },
  '/chat/completions': { api: 'openai-chat', parse: parseChatRequest },
  '/v1/responses': { api: 'openai-responses', parse: parseResponsesRequest },
  '/responses': { api: 'openai-responses', parse: parseResponsesRequest },
  '/v1/messages': { api: 'anthropic-messages', parse: parseAnthropicRequest },
  '/messages': { api: 'anthropic-messages', parse: parseAnthropicRequest },
};

const COUNT_TOKENS_PATHS = new Set(['/v1/messages/count_tokens', '/messages/count_tokens']);

/** Whether an unrouted request looks like an Anthropic client's (its errors then take Anthropic's shape). */
function speaksAnthropic(req: IncomingMessage, path: string): boolean {
  return req.headers['anthropic-version'] !== undefined || path.startsWith('/v1/messages') || path.startsWith('/messages');
}

/**
 * Starts a loopback model server on 127.0.0.1 speaking three provider APIs: OpenAI chat completions
 * (`POST /v1/chat/completions`), OpenAI Responses (`POST /v1/responses`) and Anthropic Messages
 * (`POST /v1/messages`, any `?beta=true` query, plus `POST /v1/messages/count_tokens`), each also without the `/v1`
 * prefix, each as JSON or as SSE when `stream: true`; and `GET /v1/models`. Answers come from the script, then the
 * responder, then the mode's default (see {@link LoopbackModelOptions.mode}), and render in the request's API. Every
 * reply carries real o200k usage with that API's simulated prompt cache. Bad input gets a 400 and an internal failure
 * a 500, in the API's error shape — the server never crashes. Credentials and version headers are not checked.
 */
export async function startLoopbackModel(options: LoopbackModelOptions): Promise<LoopbackModel> {
  const latencyMs = options.latencyMs ?? 0;
  const now = options.now ?? Date.now;
  const minCachedTokens = options.minCachedTokens ?? 1024;
  const prefixCache = new PrefixCache({ blockTokens: options.cacheBlockTokens ?? 128, minCachedTokens });
  const breakpointCache = new BreakpointCache((text) => prefixCache.count(text), minCachedTokens);
  const queue: ScriptStep[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const sleeps = new Sleeps();
  const modelsSeen = new Set<string>(['loopback']);
  let responder: Responder | undefined;
  let stats: LoopbackStats = { calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
  let closed = false;
  const replyContext: ReplyContext = {
    prefixCache,
    breakpointCache,
    now,
    usageScale: options.usageScale,
    addUsage: (usage) => {
      stats = {
        calls: stats.calls + 1,
        promptTokens: stats.promptTokens + usage.prompt,
        cachedTokens: stats.cachedTokens + usage.cached,
        completionTokens: stats.completionTokens + usage.completion,
      };
    },
  };

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
    if (options.mode === 'extractive') return extractiveStep(request, options.extractive);
    return { error: EXHAUSTED };
  }

  /** Reads and parses a JSON body, answering the 413/400 itself (in `api`'s shape) when it cannot. */
  async function readJson(req: IncomingMessage, res: ServerResponse, api: LoopbackApi): Promise<{ rawBody: string; value: unknown } | undefined> {
    const rawBody = await readBody(req);
    if (rawBody === undefined) {
      sendJson(res, 413, errorBodyFor(api, { status: 413, message: 'request body too large or unreadable', type: api === 'anthropic-messages' ? 'request_too_large' : 'invalid_request_error' }));
      return undefined;
    }
    try {
      return { rawBody, value: JSON.parse(rawBody) as unknown };
    } catch (err) {
      sendJson(res, 400, errorBodyFor(api, { status: 400, message: `invalid JSON body: ${(err as Error).message}`, code: 'invalid_json' }));
      return undefined;
    }
  }

  async function handleCompletion(req: IncomingMessage, res: ServerResponse, path: string, route: Route): Promise<void> {
    const read = await readJson(req, res, route.api);
    if (read === undefined) return;
    const check = route.parse(read.value);
    if (!check.ok) {
      sendJson(res, 400, errorBodyFor(route.api, { status: 400, message: check.message, code: 'invalid_request' }));
      return;
    }
    modelsSeen.add(check.value.conversation.model);
    const base = { index: requests.length, method: req.method ?? 'POST', path, headers: req.headers, rawBody: read.rawBody };
    const request: RecordedRequest = { ...base, ...check.value };
    requests.push(request);
    // A prompt above the model's window is refused as a provider refuses it, whatever the script says.
    const window = options.contextWindow;
    if (window !== undefined) {
      const tokens = promptTokens(request);
      if (tokens > window) {
        await sleeps.sleep(latencyMs);
        if (!closed && !res.destroyed) sendJson(res, 400, errorBodyFor(route.api, tooLongError(route.api, tokens, window)));
        return;
      }
    }
    const step = await resolveStep(nextStep(request), request);
    if (closed || res.destroyed) return;
    if ('stall' in step) return;
    if ('drop' in step) {
      req.socket.destroy();
      return;
    }
    await sleeps.sleep(latencyMs);
    if (closed || res.destroyed) return;
    if ('error' in step) {
      const requestId = route.api === 'anthropic-messages' ? { 'request-id': `req_loopback_${request.index}` } : {};
      sendJson(res, step.error.status, errorBodyFor(route.api, step.error), { ...requestId, ...step.error.headers });
    }
    else writeReply(res, request, step.reply, replyContext);
  }

  /** A request's prompt tokens as the (scaled) provider counts them, without touching the simulated caches. */
  function promptTokens(request: RecordedRequest): number {
    const count = (text: string): number => prefixCache.count(text);
    const measured =
      request.api === 'anthropic-messages'
        ? breakpointCache.count(request.wire)
        : (request.api === 'openai-chat' ? chatPieces(request.wire) : responsesPieces(request.wire)).reduce((sum, piece) => sum + count(piece), 0);
    return scaledTokens(measured, toolOutputTokens(request, count), options.usageScale);
  }

  /** `count_tokens`: the prompt's total input tokens, as a Messages call would count them; nothing is recorded. */
  async function handleCountTokens(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const read = await readJson(req, res, 'anthropic-messages');
    if (read === undefined) return;
    const check = parseCountTokensRequest(read.value);
    if (!check.ok) sendJson(res, 400, errorBodyFor('anthropic-messages', { status: 400, message: check.message }));
    else sendJson(res, 200, { input_tokens: breakpointCache.count(check.value) });
  }

  function listModels(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if (req.headers['anthropic-version'] !== undefined) {
      const data = [...modelsSeen].map((id) => ({ type: 'model', id, display_name: id, created_at: '1970-01-01T00:00:00Z' }));
      sendJson(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null });
      return;
    }
    const data = [...modelsSeen].map((id) => ({ id, object: 'model', created: 0, owned_by: 'baton-loopback' }));
    sendJson(res, 200, { object: 'list', data });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = ROUTES[path];
    if (req.method === 'POST' && route !== undefined) {
      await handleCompletion(req, res, path, route);
    } else if (req.method === 'POST' && COUNT_TOKENS_PATHS.has(path)) {
      await handleCountTokens(req, res);
    } else if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
      listModels(req, res);
    } else {
      req.resume();
      const api = speaksAnthropic(req, path) ? 'anthropic-messages' : 'openai-chat';
      sendJson(res, 404, errorBodyFor(api, { status: 404, message: `no route for ${req.method ?? '?'} ${path}`, code: 'unknown_url' }));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const api = speaksAnthropic(req, path) ? 'anthropic-messages' : (ROUTES[path]?.api ?? 'openai-chat');
      sendJson(res, 500, errorBodyFor(api, { status: 500, message: `loopback internal error: ${String(err)}` }));
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
      prefixCache.clear();
      breakpointCache.clear();
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
