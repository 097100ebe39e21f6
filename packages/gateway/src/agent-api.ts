import type { IncomingHttpHeaders } from 'node:http';
import type { OpenRequest, ProviderApi } from '@baton/protocol';
import type { AgentItem, AgentRequest, ReplyReader } from './agent-request.ts';

/** What the gateway needs to know of one provider API to record and rewrite its conversations. */
export interface AgentApi {
  readonly api: ProviderApi;
  /** Whether a request path (without query) is this API's conversation endpoint. */
  matches(endpoint: string): boolean;
  /** Reads a request body; null when it is not one (it is then forwarded without being recorded). */
  parse(bytes: Uint8Array): AgentRequest | null;
  /**
   * Reads a request body from its JSON value, as `parse`. The objects in the request are the value's own, which
   * nothing downstream modifies: the gateway shares the items of one request's history with the next one's
   * (`ParsedPrefixes`).
   */
  read(json: unknown): AgentRequest | null;
  /**
   * An item as the session records it and as its digest is taken: the agent's own object, except that Anthropic's
   * moving `cache_control` markers are left out (the same message, re-sent without them, stays the same message).
   */
  canonical(this: void, item: AgentItem): AgentItem;
  /** The API's part of the session's `open` request: its system prompt, request fields and headers for writers. */
  openFields(req: AgentRequest, headers: IncomingHttpHeaders): Pick<OpenRequest, 'api' | 'system' | 'params' | 'headers'>;
  /** A reader of the upstream's reply. */
  replyReader(req: AgentRequest): ReplyReader;
  /** The conversation member of the body (`messages` or `input`) and what to write into it for `items`. */
  readonly member: 'messages' | 'input';
  /** Whether the request is the agent's own compaction (a summary of the conversation it is about to replace). */
  isCompaction(req: AgentRequest, headers: IncomingHttpHeaders): boolean;
  /** A complete reply whose answer is `text`, streamed when the request asked for a stream. */
  textReply(req: AgentRequest, text: string, usage: { input: number; output: number }): { contentType: string; body: string };
}

/** Top-level fields of a body that are not carried into writer requests (the conversation, transport, bookkeeping). */
export function paramsOf(body: Readonly<Record<string, unknown>>, skip: ReadonlySet<string>): Record<string, unknown> | undefined {
  const params = Object.fromEntries(Object.entries(body).filter(([k]) => !skip.has(k)));
  return Object.keys(params).length > 0 ? params : undefined;
}

/** A system prompt that reads as a request for a summary of the conversation (an agent's own compaction). */
const SUMMARY_PROMPT = /summari[sz](e|ation|ing)|context checkpoint compaction|compact(ion)? (of )?the conversation/i;

/** The text of system items and fields, for recognising a compaction request. */
export function looksLikeSummaryRequest(systemText: string, lastUserText: string): boolean {
  return SUMMARY_PROMPT.test(systemText) || /^you are performing a context checkpoint compaction/i.test(lastUserText.trim());
}

/** An SSE event line pair. */
export function sse(event: string | null, data: unknown): string {
  return `${event !== null ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}
