import type { ServerResponse } from 'node:http';
import { anthropicErrorBody, messageBody, messageEvents, type AnthropicUsage } from './anthropic-wire.ts';
import type { BreakpointCache } from './breakpoint-cache.ts';
import type { ChatRequest } from './chat-request.ts';
import { sendJson, sendSse } from './http-io.ts';
import { completionBody, errorBody, streamChunks, type WireUsage } from './openai-wire.ts';
import type { PrefixCache } from './prefix-cache.ts';
import { completionTexts, resolveReply, type ResolvedReply } from './resolve-reply.ts';
import type { ResponsesRequest } from './responses-request.ts';
import { responseEvents, responseObject, responseOutput, type ResponsesUsage } from './responses-wire.ts';
import type { ErrorSpec, LoopbackApi, RecordedRequest, ReplySpec } from './types.ts';
import { scaledShare, scaledTokens, toolOutputTokens, type UsageScale } from './usage-scale.ts';

/** What rendering a reply needs from the server: its caches, its clock, and where usage is added up. */
export interface ReplyContext {
  readonly prefixCache: PrefixCache;
  readonly breakpointCache: BreakpointCache;
  /** ms */
  readonly now: () => number;
  readonly addUsage: (usage: { readonly prompt: number; readonly cached: number; readonly completion: number }) => void;
  /** How the provider counts otherwise than o200k (scaled usage); absent: as measured. */
  readonly usageScale?: UsageScale | undefined;
}

/** A measured prompt as the (scaled) provider reports it: every part in the same proportion. */
function scaled(request: RecordedRequest, ctx: ReplyContext, prompt: number): (part: number) => number {
  if (ctx.usageScale === undefined) return (part) => part;
  const total = scaledTokens(prompt, toolOutputTokens(request, (t) => ctx.prefixCache.count(t)), ctx.usageScale);
  return (part) => (part === prompt ? total : scaledShare(part, prompt, total));
}

/** Serialized prompt pieces: model + tools first, then each message exactly as sent (cache key order). */
export function chatPieces(body: ChatRequest): string[] {
  return [JSON.stringify({ model: body.model, tools: body.tools ?? [] }), ...body.messages.map((m) => JSON.stringify(m))];
}

/** Serialized prompt pieces: model + instructions + tools first, then each input item exactly as sent. */
export function responsesPieces(body: ResponsesRequest): string[] {
  const head = JSON.stringify({ model: body.model, instructions: body.instructions ?? null, tools: body.tools ?? [] });
  const input = body.input ?? [];
  return [head, ...(typeof input === 'string' ? [JSON.stringify(input)] : input.map((item) => JSON.stringify(item)))];
}

/** Output tokens of a reply: all of it, and the reasoning part. */
function outputTokens(reply: ResolvedReply, ctx: ReplyContext, reasoningFrom: 'reasoning' | 'thinking'): { total: number; reasoning: number } {
  const { texts, reasoning } = completionTexts(reply, reasoningFrom);
  const reasoningTokens = reasoning === '' ? 0 : ctx.prefixCache.count(reasoning);
  return { total: texts.reduce((sum, t) => sum + ctx.prefixCache.count(t), 0) + reasoningTokens, reasoning: reasoningTokens };
}

function writeChat(res: ServerResponse, request: RecordedRequest & { api: 'openai-chat' }, spec: ReplySpec, ctx: ReplyContext): void {
  const reply = resolveReply(spec, request.index);
  const measured = ctx.prefixCache.observe(chatPieces(request.wire));
  const scale = scaled(request, ctx, measured.promptTokens);
  const measure = { promptTokens: scale(measured.promptTokens), cachedTokens: scale(measured.cachedTokens) };
  const output = outputTokens(reply, ctx, 'reasoning');
  const usage: WireUsage = {
    prompt_tokens: measure.promptTokens,
    completion_tokens: output.total,
    total_tokens: measure.promptTokens + output.total,
    prompt_tokens_details: { cached_tokens: measure.cachedTokens },
    completion_tokens_details: { reasoning_tokens: output.reasoning },
  };
  ctx.addUsage({ prompt: measure.promptTokens, cached: measure.cachedTokens, completion: output.total });
  const meta = { id: `chatcmpl-loopback-${request.index}`, created: Math.floor(ctx.now() / 1000), model: request.wire.model };
  if (request.wire.stream !== true) {
    sendJson(res, 200, completionBody(meta, reply, usage));
    return;
  }
  const includeUsage = request.wire.stream_options?.include_usage === true;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const chunk of streamChunks(meta, reply, usage, includeUsage)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end('data: [DONE]\n\n');
}

function writeResponses(res: ServerResponse, request: RecordedRequest & { api: 'openai-responses' }, spec: ReplySpec, ctx: ReplyContext): void {
  const reply = resolveReply(spec, request.index);
  const measured = ctx.prefixCache.observe(responsesPieces(request.wire));
  const scale = scaled(request, ctx, measured.promptTokens);
  const measure = { promptTokens: scale(measured.promptTokens), cachedTokens: scale(measured.cachedTokens) };
  const output = outputTokens(reply, ctx, 'thinking');
  const usage: ResponsesUsage = {
    input_tokens: measure.promptTokens,
    input_tokens_details: { cached_tokens: measure.cachedTokens },
    output_tokens: output.total,
    output_tokens_details: { reasoning_tokens: output.reasoning },
    total_tokens: measure.promptTokens + output.total,
  };
  ctx.addUsage({ prompt: measure.promptTokens, cached: measure.cachedTokens, completion: output.total });
  const meta = { index: request.index, createdAt: Math.floor(ctx.now() / 1000), request: request.wire };
  if (request.wire.stream === true) sendSse(res, responseEvents(meta, reply, usage));
  else sendJson(res, 200, responseObject(meta, reply, responseOutput(meta, reply), usage));
}

function writeAnthropic(res: ServerResponse, request: RecordedRequest & { api: 'anthropic-messages' }, spec: ReplySpec, ctx: ReplyContext): void {
  const reply = resolveReply(spec, request.index, 'toolu');
  const measured = ctx.breakpointCache.observe(request.wire);
  const scale = scaled(request, ctx, measured.totalTokens);
  const measure = {
    inputTokens: scale(measured.inputTokens),
    cacheCreationTokens: scale(measured.cacheCreationTokens),
    cacheReadTokens: scale(measured.cacheReadTokens),
    totalTokens: scale(measured.totalTokens),
  };
  const output = outputTokens(reply, ctx, 'thinking');
  const usage: AnthropicUsage = {
    input_tokens: measure.inputTokens,
    cache_creation_input_tokens: measure.cacheCreationTokens,
    cache_read_input_tokens: measure.cacheReadTokens,
    output_tokens: output.total,
  };
  ctx.addUsage({ prompt: measure.totalTokens, cached: measure.cacheReadTokens, completion: output.total });
  const meta = { id: `msg_loopback_${request.index}`, model: request.wire.model };
  const headers = { 'request-id': `req_loopback_${request.index}` };
  if (request.wire.stream === true) sendSse(res, messageEvents(meta, reply, usage), headers);
  else sendJson(res, 200, messageBody(meta, reply, usage), headers);
}

/** Answers `request` with `spec` rendered in the request's API, with usage from that API's simulated cache. */
export function writeReply(res: ServerResponse, request: RecordedRequest, spec: ReplySpec, ctx: ReplyContext): void {
  switch (request.api) {
    case 'openai-chat':
      writeChat(res, request, spec, ctx);
      return;
    case 'openai-responses':
      writeResponses(res, request, spec, ctx);
      return;
    case 'anthropic-messages':
      writeAnthropic(res, request, spec, ctx);
      return;
  }
}

/** The error body of `spec` in `api`'s shape (OpenAI's for chat and Responses, Anthropic's for Messages). */
export function errorBodyFor(api: LoopbackApi, spec: ErrorSpec): object {
  switch (api) {
    case 'openai-chat':
    case 'openai-responses':
      return errorBody(spec);
    case 'anthropic-messages':
      return anthropicErrorBody(spec);
  }
}
