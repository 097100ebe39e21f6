import type { ExtractiveOptions } from './extractive/extractive-writer.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { AnthropicRequest } from './anthropic-request.ts';
import type { ChatRequest } from './chat-request.ts';
import type { ConversationView } from './conversation-view.ts';
import type { ResponsesRequest } from './responses-request.ts';
import type { UsageScale } from './usage-scale.ts';

/** The provider APIs the loopback server speaks. */
export type LoopbackApi = 'openai-chat' | 'openai-responses' | 'anthropic-messages';

/**
 * A tool call the loopback model answers with. `arguments` objects are JSON-encoded; a missing id is generated.
 * `kind: 'custom'` is a call of a free-form tool (Codex's `apply_patch`): its `arguments` string is the call's raw
 * `input`, sent as a Responses `custom_tool_call`; chat and Anthropic, which have no such call, get a function call
 * (a `tool_use`) whose arguments are `{"input": <that text>}`.
 */
export interface ToolCallSpec {
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>> | string;
  readonly id?: string;
  /** Default `'function'`. */
  readonly kind?: 'function' | 'custom';
}

/** A reasoning item: visible text and the opaque signature a client sends back with it on the next turn. */
export interface ThinkingSpec {
  readonly text: string;
  readonly signature: string;
}

/**
 * An assistant reply, rendered in the API the request came in. Defaults: `content` is `null` when there are tool
 * calls, else `''`; `finish_reason` is `'tool_calls'` when there are tool calls, else `'stop'`.
 * - `reasoning` is chat-only: sent as `message.reasoning_content`.
 * - `thinking` is for the other two APIs: a Responses `reasoning` item (summary text, `encrypted_content` = the
 *   signature) before the message, an Anthropic `thinking` block (with its signature) first; chat ignores it.
 * - `finish_reason` uses chat's words: `stop`, `tool_calls` and `length` become Anthropic's `end_turn`, `tool_use`
 *   and `max_tokens` (any other value is sent verbatim), and for Responses `length` (or `content_filter`) makes the
 *   response `incomplete`; anything else there is `completed`.
 */
export interface ReplySpec {
  readonly content?: string | null;
  readonly reasoning?: string;
  readonly thinking?: ThinkingSpec;
  readonly tool_calls?: readonly ToolCallSpec[];
  readonly finish_reason?: string;
}

/**
 * An HTTP error, in the shape of the request's API. OpenAI (chat and Responses): `{ error: { message, type, param,
 * code } }`, `type` defaulting from the status (400 `invalid_request_error`, 401 `authentication_error`, 403
 * `permission_error`, 429 `rate_limit_error`, 5xx `server_error`). Anthropic: `{ type: 'error', error: { type,
 * message } }`, `type` defaulting to Anthropic's names (…, 413 `request_too_large`, 500 `api_error`, 529
 * `overloaded_error`), `code` unused. `headers` are added verbatim (e.g. `{ 'retry-after-ms': '10' }`).
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

/** What every recorded request carries, whatever its API. */
interface RecordedRequestBase {
  /** 0-based arrival order among the model requests (all APIs; not `count_tokens`) since start or `reset()`. */
  readonly index: number;
  readonly method: string;
  /** The path as requested, without the query string. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  readonly rawBody: string;
  /**
   * The request in chat-completions form. For `openai-chat` it is the parsed body itself (the untransformed
   * `JSON.parse` result, so `body === wire`); for the other APIs a translation built from {@link conversation}
   * (instructions or system prompt as a leading system message, tool results as `tool` messages, function tools
   * as chat tools), so responders written against chat requests read any API.
   */
  readonly body: ChatRequest;
  /** The API-neutral view: system text, then each message or item as role, text, tool calls and tool results. */
  readonly conversation: ConversationView;
}

/**
 * A model request as the loopback server received it: `api` tells which API, `wire` is the parsed body in that API's
 * own shape (the untransformed `JSON.parse` result, validated).
 */
export type RecordedRequest =
  | (RecordedRequestBase & { readonly api: 'openai-chat'; readonly wire: ChatRequest })
  | (RecordedRequestBase & { readonly api: 'openai-responses'; readonly wire: ResponsesRequest })
  | (RecordedRequestBase & { readonly api: 'anthropic-messages'; readonly wire: AnthropicRequest });

/** Options of {@link startLoopbackModel}. */
export interface LoopbackModelOptions {
  /**
   * `scripted`: answers with queued steps, then the responder, else a 500 "loopback script exhausted".
   * `extractive`: queued steps and the responder still win; otherwise a deterministic fake checkpoint writer answers.
   */
  readonly mode: 'scripted' | 'extractive';
  /** `extractive`: what the fake writer does beyond the checkpoint. */
  readonly extractive?: ExtractiveOptions;
  /** Delay before every answer (replies and errors), simulating model latency. Default 0. */
  readonly latencyMs?: number;
  /** Fixed port; default an ephemeral one. */
  readonly port?: number;
  /** Granularity of simulated OpenAI cache hits, in tokens. Default 128 (like OpenAI). Anthropic is not rounded. */
  readonly cacheBlockTokens?: number;
  /**
   * Smallest cache hit reported (OpenAI: shorter shared prefixes report 0) and smallest prefix Anthropic caches at a
   * breakpoint. Default 1024 (like OpenAI, and Anthropic's Sonnet and Opus models).
   */
  readonly minCachedTokens?: number;
  /** Clock for the `created` field, in ms. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Counts tool outputs and other prompt tokens heavier or lighter than o200k (a provider with another tokenizer, or
   * images in tool results): the usage every reply reports and the window check are scaled. Default: o200k as it is.
   */
  readonly usageScale?: UsageScale;
  /**
   * The model's context window: a request whose (scaled) prompt is above it is refused with a 400 in the API's shape
   * ("…resulted in N tokens", "prompt is too long: N tokens > W maximum"), as a provider does; it is recorded in
   * `requests` all the same and consumes no script step. Default: no limit.
   */
  readonly contextWindow?: number;
}

/**
 * Cumulative usage of the replies answered in every API (errors, stalls and drops carry no usage and are not
 * counted). `promptTokens` is all input (Anthropic: uncached + cache writes + cache reads), `cachedTokens` the cache
 * hits (Anthropic: cache reads), `completionTokens` all output (reasoning and thinking included).
 */
export interface LoopbackStats {
  readonly calls: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  readonly completionTokens: number;
}

/** A running loopback model server (OpenAI chat completions and Responses, Anthropic Messages). */
export interface LoopbackModel {
  /** `http://127.0.0.1:<port>`, the `baseURL` for `new Anthropic(...)`. */
  readonly url: string;
  /** `url + '/v1'`, the `baseURL` for `new OpenAI(...)`. */
  readonly baseURL: string;
  readonly port: number;
  /** Every well-formed model request of any API, in arrival order (live array). */
  readonly requests: readonly RecordedRequest[];
  /** Appends steps to the script (one per request, in order). Same as {@link LoopbackModel.enqueue}. */
  script(...steps: ScriptStep[]): void;
  enqueue(...steps: ScriptStep[]): void;
  /** Number of script steps not yet consumed. */
  pending(): number;
  /** Sets (or clears with `undefined`) the responder used when the script is empty. */
  setResponder(responder: Responder | undefined): void;
  stats(): LoopbackStats;
  /** Clears the script, the responder, the recorded requests, the stats and the simulated prefix caches. */
  reset(): void;
  /** Destroys every open connection (stalled requests included) and stops listening. Idempotent. */
  close(): Promise<void>;
}
