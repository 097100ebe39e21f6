import { StringDecoder } from 'node:string_decoder';
import type { AgentReply, ReplyReader } from './agent-request.ts';
import { StreamedReply, replyOfCompletion, type ChatReply } from './chat-reply.ts';

const asAgentReply = (reply: ChatReply | null): AgentReply | null => (reply === null ? null : { finishReason: reply.finishReason, usage: reply.usage === null ? null : { ...reply.usage }, items: 1 });

/** Reads a chat-completions reply: a streamed one through its chunks (tool calls, finish reason, usage chunk). */
export class ChatReplyReader implements ReplyReader {
  readonly #streamed: StreamedReply | null;
  readonly #decoder = new StringDecoder('utf8');
  readonly #chunks: Buffer[] = [];

  constructor(stream: boolean) {
    this.#streamed = stream ? new StreamedReply() : null;
  }

  feed(chunk: Buffer): void {
    if (this.#streamed !== null) this.#streamed.feed(this.#decoder.write(chunk));
    else this.#chunks.push(chunk);
  }

  reply(): AgentReply | null {
    if (this.#streamed !== null) return asAgentReply(this.#streamed.complete ? this.#streamed.reply() : null);
    try {
      return asAgentReply(replyOfCompletion(JSON.parse(Buffer.concat(this.#chunks).toString('utf8'))));
    } catch {
      return null;
    }
  }
}
