import type { ProviderApi, Usage } from '@baton/protocol';

/** One item of an agent's conversation as it sent it: a chat message, a Responses input item, an Anthropic message. */
export type AgentItem = Readonly<Record<string, unknown>>;

/**
 * What the gateway reads of an agent's model request, whatever its API. Everything else passes through untouched;
 * the objects are the ones `JSON.parse` produced (key order kept).
 */
export interface AgentRequest {
  readonly api: ProviderApi;
  readonly model: string;
  /**
   * Leading system items, sent before Baton's rebuilt context and never recorded as conversation (chat: leading
   * system/developer messages; Responses: leading system/developer items; Anthropic: none — its `system` is a field).
   */
  readonly system: readonly AgentItem[];
  /** The conversation after them. */
  readonly history: readonly AgentItem[];
  readonly tools: readonly object[] | null;
  readonly stream: boolean;
  /** The parsed body, every field as sent. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** The reply of one call, as far as the session records it (on the agent's echo of its last item). */
export interface AgentReply {
  readonly finishReason: string | null;
  /** In Baton's terms (`usageFromProvider`). */
  readonly usage: Usage | null;
  /** How many conversation items the agent will echo for it (a Responses reply is one item per output). */
  readonly items: number;
}

/** Reads an upstream reply as it passes through; `reply()` is null until the reply is complete. */
export interface ReplyReader {
  feed(chunk: Buffer): void;
  reply(): AgentReply | null;
}
