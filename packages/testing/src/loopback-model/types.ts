import type { IncomingHttpHeaders } from 'node:http';
import type { ChatRequest } from './chat-request.ts';

/** A tool call the loopback model answers with. `arguments` objects are JSON-encoded; a missing id is generated. */
export interface ToolCallSpec {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>> | string;
  readonly id?: string;
}

/**
 * An assistant reply. Defaults: `content` is `null` when there are tool calls, else `''`; `finish_reason` is
 * `'tool_calls'` when there are tool calls, else `'stop'`. `reasoning` is sent as `message.reasoning_content`.
 */
export interface ReplySpec {
  readonly content?: string | null;
  readonly reasoning?: string;
  readonly tool_calls?: readonly ToolCallSpec[];
  readonly finish_reason?: string;
}

/**
 * An HTTP error answered with an OpenAI-shaped body `{ error: { message, type, param, code } }`. `type` defaults from
 * the status (400 `invalid_request_error`, 401 `authentication_error`, 403 `permission_error`, 429
 * `rate_limit_error`, 5xx `server_error`); `headers` are added verbatim (e.g. `{ 'retry-after-ms': '10' }`).
 */
export interface ErrorSpec {
  readonly status: number;
  readonly message?: string;
  readonly type?: string;
  readonly code?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One scripted answer, consumed by one request:
 * - `{ reply }` a completion; `{ error }` an HTTP error;
 * - `{ stall: true }` never answers (the socket is destroyed by `close()`);
 * - `{ drop: true }` destroys the socket (the client sees a network error);
 * - `{ delayMs, then }` waits, then answers with `then`;
 * - a function of the request returning a step (may be async).
 */
export type ScriptStep =
  | { readonly reply: ReplySpec }
  | { readonly error: ErrorSpec }
  | { readonly stall: true }
  | { readonly drop: true }
  | { readonly delayMs: number; readonly then: ScriptStep }
  | Responder;

/** Computes the answer to a request. */
export type Responder = (request: RecordedRequest) => ScriptStep | Promise<ScriptStep>;

/** A chat-completions request as the loopback server received it. */
export interface RecordedRequest {
  /** 0-based arrival order among the chat-completions requests since start (or the last `reset()`). */
  readonly index: number;
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  readonly rawBody: string;
  /** The parsed body (untransformed `JSON.parse` result, validated against {@link ChatRequest}). */
  readonly body: ChatRequest;
}

/** Options of {@link startLoopbackModel}. */
export interface LoopbackModelOptions {
  /**
   * `scripted`: answers with queued steps, then the responder, else a 500 "loopback script exhausted".
   * `extractive`: queued steps and the responder still win; otherwise a deterministic fake checkpoint writer answers.
   */
  readonly mode: 'scripted' | 'extractive';
  /** Delay before every answer (replies and errors), simulating model latency. Default 0. */
  readonly latencyMs?: number;
  /** Fixed port; default an ephemeral one. */
  readonly port?: number;
  /** Granularity of simulated cache hits, in tokens. Default 128 (like OpenAI). */
  readonly cacheBlockTokens?: number;
  /** Smallest cache hit reported; shorter shared prefixes report 0. Default 1024 (like OpenAI). */
  readonly minCachedTokens?: number;
  /** Clock for the `created` field, in ms. Default `Date.now`. */
  readonly now?: () => number;
}

/** Cumulative usage of the completions answered (errors, stalls and drops carry no usage and are not counted). */
export interface LoopbackStats {
  readonly calls: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly completionTokens: number;
}

/** A running loopback OpenAI-compatible model server. */
export interface LoopbackModel {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `url + '/v1'`, the `baseURL` for `new OpenAI(...)`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every well-formed chat-completions request, in arrival order (live array). */
  readonly requests: readonly RecordedRequest[];
  /** Appends steps to the script (one per request, in order). Same as {@link LoopbackModel.enqueue}. */
  script(...steps: ScriptStep[]): void;
  enqueue(...steps: ScriptStep[]): void;
  /** Number of script steps not yet consumed. */
  pending(): number;
  /** Sets (or clears with `undefined`) the responder used when the script is empty. */
  setResponder(responder: Responder | undefined): void;
  stats(): LoopbackStats;
  /** Clears the script, the responder, the recorded requests, the stats and the simulated prefix cache. */
  reset(): void;
  /** Destroys every open connection (stalled requests included) and stops listening. Idempotent. */
  close(): Promise<void>;
}
