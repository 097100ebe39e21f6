import type { BatonClient } from '@baton/client';
import { toProviderMessage, type Message } from '@baton/protocol';
import type { ChatReply } from './chat-reply.ts';
import type { ChatMessage, ChatRequest } from './chat-request.ts';
import { continues, messageDigest, messageId, splitHistory, systemPrompt } from './conversation.ts';
import { setMember } from './json-splice.ts';

/** The agent's history prefix a rebuild replaced, and what the upstream gets instead. */
interface Substitution {
  /** Messages of the agent's history (after its system messages) that the rebuilt context stands for. */
  readonly agentLength: number;
  /** The rebuilt context, as the provider gets it (Baton's envelope fields removed). */
  readonly context: readonly Record<string, unknown>[];
}

/** One agent conversation as the gateway follows it: one slice of a session key. */
export interface GatewaySession {
  readonly key: string;
  /** The daemon session of this slice (`<key>`, or `<key>-s<n>` for a history that continued no earlier slice). */
  daemonSessionId: string;
  slice: number;
  model: string;
  usableWindow: number;
  /** Digests of the history messages recorded so far, in order. */
  recorded: string[];
  /** The reply of the last successful call, recorded once the agent sends it back (with its usage). */
  pending: { readonly index: number; readonly reply: ChatReply } | null;
  substitution: Substitution | null;
  /** Rewrites of this session so far (a rebuild replaced part of the agent's history in what the upstream got). */
  rewrites: number;
}

/** A history message as the daemon records it, with the digest of the agent's message. */
export interface Recorded {
  readonly message: Message;
  readonly digest: string;
}

/** What forwarding one recorded request needs: the bytes for the upstream and the records to append on success. */
export interface Prepared {
  /** The slice the request belongs to. */
  readonly session: GatewaySession;
  readonly body: Uint8Array;
  /** The history messages to append once the upstream answered (empty when they were appended already). */
  readonly toAppend: readonly Recorded[];
  /** Where the agent's echo of this call's reply will sit in its history. */
  readonly replyIndex: number;
  /** Whether the request goes upstream rewritten onto a rebuilt context. */
  readonly rewritten: boolean;
  /** Whether preparing it rebuilt the context (a new substitution). */
  readonly rebuilt: boolean;
}

export interface RecorderOptions {
  readonly client: BatonClient;
  readonly projectId: string;
  readonly contextWindow: (model: string) => number;
  readonly log: (level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Record<string, unknown>) => void;
}

/** Slices kept per session key (the oldest is forgotten past this; its daemon session stays as it is). */
const MAX_SLICES = 16;

const usageTotal = (reply: ChatReply | null | undefined): number | null =>
  reply?.usage === null || reply?.usage === undefined ? null : (reply.usage.total_tokens ?? reply.usage.prompt_tokens + reply.usage.completion_tokens);

/**
 * Records a session's conversation from the requests an agent sends through the gateway, and rewrites those requests
 * after a rebuild. Keeps per session only digests and the last reply's facts; the messages themselves go to the
 * daemon (deterministic ids, so a re-sent history is deduplicated there).
 */
export class SessionRecorder {
  readonly #o: RecorderOptions;
  /** The slices of each session key, oldest first. */
  readonly #slices = new Map<string, GatewaySession[]>();

  constructor(options: RecorderOptions) {
    this.#o = options;
  }

  /** The newest slice of a session key. */
  session(key: string): GatewaySession | undefined {
    return this.#slices.get(key)?.at(-1);
  }

  /** Whether this request belongs to the session's conversation (a side call — no tools, another model — does not). */
  isSideCall(key: string, req: ChatRequest): boolean {
    if (req.tools === null || req.tools.length === 0) return true;
    const session = this.session(key);
    return session !== undefined && session.model !== req.model;
  }

  async #open(key: string, sessionId: string, req: ChatRequest, system: readonly ChatMessage[], projectId: string | null): Promise<{ usableWindow: number }> {
    const prompt = systemPrompt(system);
    if (prompt === null) this.#o.log('warn', 'system prompt is not plain text: writers of this session run without it', { session: key });
    const opened = await this.#o.client.open({
      session_id: sessionId,
      project_id: projectId ?? this.#o.projectId,
      agent: 'gateway',
      model: { id: req.model, context_window: this.#o.contextWindow(req.model) },
      ...(prompt !== null && prompt.length > 0 ? { system: prompt } : {}),
      ...(req.tools !== null ? { tools: req.tools.map((t) => t as Record<string, unknown>) } : {}),
    });
    if (opened.usable_window === 0) this.#o.log('warn', 'the model leaves no usable window: overflowing requests are forwarded as they are', { session: key, model: req.model });
    return { usableWindow: opened.usable_window };
  }

  /**
   * Before forwarding: follows the session to this request (opening it in `projectId`, default the gateway's, or a
   * new slice when the agent rewrote its history), and when the conversation overflows the usable window, records what is new, asks the daemon for a
   * rebuild and rewrites the request — also when `tooLong`: the upstream refused it as longer than the window. Returns
   * the bytes to forward and what to append once the call succeeded.
   */
  async prepare(key: string, req: ChatRequest, bytes: Uint8Array, options: { projectId?: string | null; tooLong?: boolean } = {}): Promise<Prepared> {
    const tooLong = options.tooLong ?? false;
    const { system, history } = splitHistory(req.messages);
    const slices = this.#slices.get(key) ?? [];
    // The slice this history continues, the one that recorded most when several do. Each conversation under one key
    // keeps its own slice and rewrite: an agent that compacted or edited its history gets a new slice, and another
    // conversation on the same key (a sub-agent, a second window, a copied URL) neither displaces the first one —
    // which would then lose its rebuilt context and be sent upstream in full — nor is ever given its context.
    let session = slices.reduce<GatewaySession | undefined>(
      (best, s) => (continues(s.recorded, history) && (best === undefined || s.recorded.length >= best.recorded.length) ? s : best),
      undefined,
    );
    if (session === undefined) {
      const slice = (slices.at(-1)?.slice ?? -1) + 1;
      const daemonSessionId = slice === 0 ? key : `${key}-s${slice}`;
      if (slice > 0) this.#o.log('info', 'a history that continues no slice of the session: a new slice', { session: key, slice });
      const { usableWindow } = await this.#open(key, daemonSessionId, req, system, options.projectId ?? null);
      session = { key, daemonSessionId, slice, model: req.model, usableWindow, recorded: [], pending: null, substitution: null, rewrites: 0 };
      slices.push(session);
      if (slices.length > MAX_SLICES) slices.shift();
      this.#slices.set(key, slices);
    }
    const toAppend = this.#newMessages(session, history);
    // The request's size: the last call's reported usage, plus about a token per four bytes of what is new since.
    const pendingTotal = usageTotal(session.pending?.reply);
    const added = toAppend.reduce((sum, r) => sum + Math.ceil(JSON.stringify(r.message).length / 4), 0);
    // A usable window of 0 (the model's window is smaller than the daemon's reserves) means no overflow handling, as
    // in the daemon: every request would otherwise count as an overflow and ask for a rebuild.
    if (tooLong || (pendingTotal !== null && session.usableWindow > 0 && pendingTotal + added >= session.usableWindow)) {
      return await this.#overflow(session, bytes, system, history, toAppend);
    }
    return { session, body: this.#rewrite(session, bytes, system, history), toAppend, replyIndex: history.length, rewritten: session.substitution !== null, rebuilt: false };
  }

  /**
   * Overflow: the daemon gets the history up to the newest assistant message and replaces it with its rebuilt
   * context; what follows that message (the tool results the model has not seen yet, a new prompt) goes upstream
   * verbatim after the context and is recorded once the call succeeds — a rebuild clears old tool outputs, and these
   * are not old. A rebuild that fails leaves the earlier substitution (if any) in place.
   */
  async #overflow(session: GatewaySession, bytes: Uint8Array, system: readonly ChatMessage[], history: readonly ChatMessage[], toAppend: readonly Recorded[]): Promise<Prepared> {
    let newestAssistant = history.length - 1;
    while (newestAssistant >= 0 && history[newestAssistant]?.role !== 'assistant') newestAssistant--;
    const cut = Math.max(session.recorded.length, newestAssistant + 1);
    const before = toAppend.slice(0, cut - session.recorded.length);
    const after = toAppend.slice(before.length);
    await this.append(session, before);
    let rebuilt = false;
    try {
      const reply = await this.#o.client.rebuild(session.daemonSessionId, { reason: 'overflow' });
      if (reply.context.length > 0) {
        session.substitution = { agentLength: cut, context: reply.context.map(toProviderMessage) };
        session.pending = null;
        session.rewrites++;
        rebuilt = true;
        this.#o.log('info', 'rebuilt the context on overflow', { session: session.key, outcome: reply.outcome, covered: reply.covered_up_to });
      }
    } catch (err) {
      this.#o.log('warn', 'the rebuild failed: the request goes on the context it had', { session: session.key, error: err instanceof Error ? err.message : String(err) });
    }
    return { session, body: this.#rewrite(session, bytes, system, history), toAppend: after, replyIndex: history.length, rewritten: session.substitution !== null, rebuilt };
  }

  /** The history messages not recorded yet, as daemon messages (the pending reply's facts on its echo). */
  #newMessages(session: GatewaySession, history: readonly ChatMessage[]): Recorded[] {
    const out: Recorded[] = [];
    for (let i = session.recorded.length; i < history.length; i++) {
      const m = history[i] as ChatMessage;
      const digest = messageDigest(m);
      const reply = session.pending?.index === i && m.role === 'assistant' ? session.pending.reply : null;
      const message: Message = {
        ...(m as unknown as Message),
        id: messageId(i, digest),
        ...(reply !== null && reply.finishReason !== null ? { finish_reason: reply.finishReason } : {}),
        ...(reply?.usage !== null && reply?.usage !== undefined ? { usage: { ...reply.usage } } : {}),
      };
      out.push({ message, digest });
    }
    return out;
  }

  /**
   * The bytes the upstream gets: the agent's own bytes, or after a rebuild its system messages, the rebuilt context
   * and the messages after the replaced prefix, spliced into the `messages` member (every other byte as sent).
   */
  #rewrite(session: GatewaySession, bytes: Uint8Array, system: readonly ChatMessage[], history: readonly ChatMessage[]): Uint8Array {
    const sub = session.substitution;
    if (sub === null) return bytes;
    const messages = [...system, ...sub.context, ...history.slice(sub.agentLength)];
    const text = setMember(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), 'messages', JSON.stringify(messages));
    return Buffer.from(text, 'utf8');
  }

  /** Appends history messages to the session's daemon session and marks them recorded. */
  async append(session: GatewaySession, records: readonly Recorded[]): Promise<void> {
    for (let i = 0; i < records.length; i += 1000) {
      await this.#o.client.append(session.daemonSessionId, records.slice(i, i + 1000).map((r) => r.message));
    }
    for (const r of records) session.recorded.push(r.digest);
    if (records.length > 0 && session.pending !== null && session.pending.index < session.recorded.length) session.pending = null;
  }

  /** A call succeeded: its reply is recorded when the agent sends it back at `index`. */
  completed(session: GatewaySession, index: number, reply: ChatReply): void {
    session.pending = { index, reply };
  }
}
