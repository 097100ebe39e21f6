import { z } from 'zod';

const Part = z.looseObject({});

/**
 * What the gateway reads of a chat-completions request. Everything else passes through untouched; the parsed objects
 * are the ones `JSON.parse` produced (key order kept), never zod's copies.
 */
const ChatRequestShape = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.looseObject({ role: z.string() })),
  tools: z.array(Part).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
});

/** A chat message as the agent sent it. */
export type ChatMessage = Readonly<Record<string, unknown>> & { readonly role: string };

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly object[] | null;
  readonly stream: boolean;
  /** Whether the agent asked for the final usage chunk of a stream itself. */
  readonly includeUsage: boolean;
  /** The parsed body, every field as sent. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** Reads a chat-completions request body; null when it is not one (it is then forwarded without being recorded). */
export function parseChatRequest(bytes: Uint8Array): ChatRequest | null {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return null;
  }
  if (!ChatRequestShape.safeParse(body).success) return null;
  const b = body as Record<string, unknown> & { model: string; messages: ChatMessage[]; tools?: object[] | null; stream?: boolean | null; stream_options?: { include_usage?: boolean | null } | null };
  return {
    model: b.model,
    messages: b.messages,
    tools: b.tools ?? null,
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
    body: b,
  };
}
