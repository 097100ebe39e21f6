import type { z } from 'zod';
import { anthropicConversation } from './anthropic-conversation.ts';
import { anthropicCountTokensSchema, anthropicRequestSchema, type AnthropicPrompt, type AnthropicRequest } from './anthropic-request.ts';
import { countBreakpoints, MAX_CACHE_BREAKPOINTS } from './breakpoint-cache.ts';
import { chatConversation, chatForm } from './chat-conversation.ts';
import { chatRequestSchema, type ChatRequest } from './chat-request.ts';
import type { ConversationView } from './conversation-view.ts';
import { responsesConversation } from './responses-conversation.ts';
import { responsesRequestSchema, type ResponsesRequest } from './responses-request.ts';

/** The API-specific parts of a recorded request. */
export type ParsedRequest =
  | { readonly api: 'openai-chat'; readonly wire: ChatRequest; readonly body: ChatRequest; readonly conversation: ConversationView }
  | { readonly api: 'openai-responses'; readonly wire: ResponsesRequest; readonly body: ChatRequest; readonly conversation: ConversationView }
  | { readonly api: 'anthropic-messages'; readonly wire: AnthropicRequest; readonly body: ChatRequest; readonly conversation: ConversationView };

/** A parsed request, or the message of the 400 that refuses it. */
export type ParseResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
}

/*
 * Every parser keeps the untransformed `JSON.parse` result (zod's output reorders keys), so the recorded body and the
 * simulated caches see the bytes as sent.
 */

export function parseChatRequest(value: unknown): ParseResult<ParsedRequest> {
  const check = chatRequestSchema.safeParse(value);
  if (!check.success) return { ok: false, message: `invalid chat completion request: ${issues(check.error)}` };
  const wire = value as ChatRequest;
  return { ok: true, value: { api: 'openai-chat', wire, body: wire, conversation: chatConversation(wire) } };
}

export function parseResponsesRequest(value: unknown): ParseResult<ParsedRequest> {
  const check = responsesRequestSchema.safeParse(value);
  if (!check.success) return { ok: false, message: `invalid responses request: ${issues(check.error)}` };
  const wire = value as ResponsesRequest;
  const conversation = responsesConversation(wire);
  return { ok: true, value: { api: 'openai-responses', wire, body: chatForm(conversation), conversation } };
}

function checkBreakpoints(prompt: AnthropicPrompt): string | undefined {
  const found = countBreakpoints(prompt);
  return found > MAX_CACHE_BREAKPOINTS ? `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${found}.` : undefined;
}

/** Parses a Messages body; more than {@link MAX_CACHE_BREAKPOINTS} `cache_control` blocks is refused like Anthropic does. */
export function parseAnthropicRequest(value: unknown): ParseResult<ParsedRequest> {
  const check = anthropicRequestSchema.safeParse(value);
  if (!check.success) return { ok: false, message: issues(check.error) };
  const wire = value as AnthropicRequest;
  const tooMany = checkBreakpoints(wire);
  if (tooMany !== undefined) return { ok: false, message: tooMany };
  const conversation = anthropicConversation(wire);
  return { ok: true, value: { api: 'anthropic-messages', wire, body: chatForm(conversation), conversation } };
}

/** Parses a `count_tokens` body (a Messages body without `max_tokens`). */
export function parseCountTokensRequest(value: unknown): ParseResult<AnthropicPrompt> {
  const check = anthropicCountTokensSchema.safeParse(value);
  if (!check.success) return { ok: false, message: issues(check.error) };
  const prompt = value as AnthropicPrompt;
  const tooMany = checkBreakpoints(prompt);
  return tooMany === undefined ? { ok: true, value: prompt } : { ok: false, message: tooMany };
}
