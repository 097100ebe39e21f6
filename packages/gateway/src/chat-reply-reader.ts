import { StringDecoder } from 'node:string_decoder';
import type { AgentReply, ReplyReader } from './agent-request.ts';
import { StreamedReply, replyOfCompletion, type ChatReply } from './chat-reply.ts';

const asAgentReply = (reply: ChatReply | null): AgentReply | null => (reply === null ? null : { finishReason: reply.finishReason, usage: reply.usage === null ? null : { ...reply.usage }, items: 1 });

/** Reads a chat-completions reply: a streamed one through its chunks (tool calls, finish reason, usage chunk). */
export class ChatReplyReader implements ReplyReader {
  readonly #streamed: StreamedReply | null;
  /** A streamed reply's text decoder (a read may end inside a multi-byte character); a whole body is decoded at once. */
  readonly #decoder: StringDecoder | null;
  readonly #chunks: Buffer[] = [];

  constructor(stream: boolean) {
    this.#streamed = stream ? new StreamedReply() : null;
    this.#decoder = stream ? new StringDecoder('utf8') : null;
  }

  feed(chunk: Buffer): void {
    if (this.#streamed !== null && this.#decoder !== null) this.#streamed.feed(this.#decoder.write(chunk));
    else this.#chunks.push(chunk);
  }

  reply(): AgentReply | null {
    if (this.#streamed !== null) return asAgentReply(this.#streamed.complete ? this.#streamed.reply() : null);
    try {
      // A small reply usually comes in one read: parsed from it as it is, not from a copy.
      const body = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
      return asAgentReply(replyOfCompletion(JSON.parse(body.toString('utf8'))));
    } catch {
      return null;
    }
  }
}
