import type { IncomingHttpHeaders } from 'node:http';
import type { BatonClient } from '@baton/client';
import { MAX_APPEND_MESSAGES, providerMessages, type Message, type ProviderApi, type RebuildReply } from '@baton/protocol';
import type { AgentApi } from './agent-api.ts';
import type { AgentItem, AgentReply, AgentRequest } from './agent-request.ts';
import { agentIdentity } from './agent-identity.ts';
import { withContextBreakpoint } from './context-breakpoint.ts';
import { continues, itemDigest, messageId } from './conversation.ts';
import { setMember } from './json-splice.ts';
import { BoundedMap } from './bounded-map.ts';
import { loopTurn } from './loop-turn.ts';
import { estimatedTokens } from './estimated-tokens.ts';
import { SUMMARY_ASK, textOfItem, toRole } from './agent-items.ts';
import { resumeGrant, startsOver } from './resume-grant.ts';

/** The agent's history prefix a rebuild replaced, and what the upstream gets instead. */
interface Substitution {
  /** Items of the agent's history (after its system items) that the rebuilt context stands for. */
  readonly agentLength: number;
  /** The rebuilt context, as the daemon answered it. */
  readonly context: readonly Message[];
}

/** One agent conversation as the gateway follows it: one slice of a session key. */
export interface GatewaySession {
  readonly key: string;
  /** The daemon session of this slice (`<key>`, or `<key>-s<n>` for a history that continued no earlier slice). */
  daemonSessionId: string;
  slice: number;
  /** The owner digest the daemon session was last opened with (the credential it is bound to). */
  owner: string | null;
  readonly api: ProviderApi;
  /** The agent this conversation is (its system prompt and tools, `agentIdentity`): who may continue it in a new slice. */
  readonly identity: string;
  model: string;
  usableWindow: number;
  /** Digests of the history items recorded so far (canonical forms), in order. */
  recorded: string[];
  /** The reply of the last successful call, recorded once the agent sends it back (with its usage). */
  pending: { readonly index: number; readonly reply: AgentReply } | null;
  substitution: Substitution | null;
  /** Rewrites of this session so far (a rebuild replaced part of the agent's history in what the upstream got). */
  rewrites: number;
  /** Appends of completed calls on their way to the daemon, in call order. */
  appending: Promise<void>;
  /**
   * Provider tokens per Baton token the daemon learnt for this session from the usage the replies reported, by kind
   * (null until a reply reported usage): what the gateway's estimate of new items is scaled by.
   */
  calibration: { readonly text: number; readonly tool: number; readonly image: number; readonly message?: number | undefined } | null;
  /**
   * The summary the gateway answered the agent's own compaction with, and the rebuilt context it stands for: the
   * agent's next history starts from that summary and continues this slice (`adoptCompaction`).
   */
  compaction: { readonly summary: string; readonly context: readonly Message[] } | null;
  /**
   * Recording is stalled: an append the daemon did not take was rolled back (`recorded` ends before its messages), and
   * the session's next call sends them again, from the first unrecorded one.
   */
  stalled: boolean;
  /** Roll-backs so far: an append queued before one is not sent (the next call carries its messages again, in order). */
  rollbacks: number;
  /**
   * The context the daemon session inherited (a handoff): sent on every request right after the agent's system items,
   * the same bytes each time, and never recorded (the session's opening holds it). Null: none.
   */
  inherited: readonly Message[] | null;
}

/** A history item as the daemon records it, with its digest. */
export interface Recorded {
  readonly message: Message;
  readonly digest: string;
}

/** What forwarding one recorded request needs: the bytes for the upstream and the records to append on success. */
export interface Prepared {
  /** The slice the request belongs to. */
  readonly session: GatewaySession;
  readonly body: Uint8Array;
  /** The history items to append once the upstream answered (empty when they were appended already). */
  readonly toAppend: readonly Recorded[];
  /** How many items of the slice were recorded when the call was prepared (`toAppend` follows them). */
  readonly from: number;
  /** Where the agent's echo of this call's reply will start in its history. */
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
  /**
   * Session keys followed at once, and how long an unused one is kept: a forgotten key's next request opens its
   * daemon session again and re-sends its history (deduplicated there). A key with a stalled slice is kept.
   */
  readonly max: number;
  readonly idleMs: number;
  readonly now: () => number;
  /** An agent that starts over on a known session gets its rebuilt context inserted (`startsOver`, `resumeGrant`). */
  readonly resumeEmpty?: boolean;
  /** Recording a slice's messages failed (`stalls`: it was recording until now), or a stalled slice recorded again. */
  readonly onRecording?: (event: { readonly daemonSessionId: string; readonly failed: boolean; readonly stalls: boolean }) => void;
}

/** Slices kept per session key (the oldest is forgotten past this; its daemon session stays as it is). */
const MAX_SLICES = 16;

/** Slice names skipped, at most, when other credentials hold them. */
const MAX_SLICE_SKIPS = 8;

const usageTotal = (reply: AgentReply | null | undefined): number | null =>
  reply?.usage === null || reply?.usage === undefined ? null : (reply.usage.total_tokens ?? reply.usage.prompt_tokens + reply.usage.completion_tokens);

/**
 * Records a session's conversation from the requests an agent sends through the gateway, in the agent's API, and
 * rewrites those requests after a rebuild. Keeps per session only digests and the last reply's facts; the items
 * themselves go to the daemon (deterministic ids, so a re-sent history is deduplicated there).
 */
export class SessionRecorder {
  readonly #o: RecorderOptions;
  /** The slices of each session key, oldest first. */
  readonly #slices: BoundedMap<string, GatewaySession[]>;
  /** Appends under way (of forgotten keys too), for `flush`. */
  readonly #appends = new Set<Promise<void>>();

  constructor(options: RecorderOptions) {
    this.#o = options;
    // A stalled slice is kept: forgetting it would forget that the daemon still shows it stalled.
    this.#slices = new BoundedMap({ max: options.max, idleMs: options.idleMs, now: options.now, pinned: (slices) => slices.some((s) => s.stalled) });
  }

  /** Session keys followed now. */
  get size(): number {
    return this.#slices.size;
  }

  /** The newest slice of a session key. */
  session(key: string): GatewaySession | undefined {
    return this.#slices.peek(key)?.at(-1);
  }

  /** The slice `req`'s history continues (the one that recorded most when several do), if any. */
  sliceFor(key: string, api: AgentApi, req: AgentRequest): GatewaySession | undefined {
    return (this.#slices.peek(key) ?? []).reduce<GatewaySession | undefined>(
      (best, s) => (s.api === api.api && continues(s.recorded, req.history, api.canonical) && (best === undefined || s.recorded.length >= best.recorded.length) ? s : best),
      undefined,
    );
  }

  /** Whether this request belongs to the session's conversation (a side call — no tools, another model — does not). */
  isSideCall(key: string, req: AgentRequest): boolean {
    if (req.tools === null || req.tools.length === 0) return true;
    const session = this.session(key);
    return session !== undefined && session.model !== req.model;
  }

  /** The last reported usage of a slice's conversation (0 before any). */
  lastUsage(session: GatewaySession): number {
    return usageTotal(session.pending?.reply) ?? 0;
  }

  /**
   * Before the agent's own compaction of `session` is answered: the items of its history not recorded yet (the last
   * reply and the tool outputs after it) are appended, so the summary covers them; the compaction prompt itself, the
   * last item when it asks for a summary, is not part of the conversation.
   */
  async recordBeforeCompaction(session: GatewaySession, api: AgentApi, req: AgentRequest): Promise<void> {
    await session.appending;
    const last = req.history.at(-1);
    const asks = last !== undefined && toRole(last, api.api) === 'user' && SUMMARY_ASK.test(textOfItem(last));
    const history = asks ? req.history.slice(0, -1) : req.history;
    if (!continues(session.recorded, history, api.canonical)) return;
    const records = this.#newItems(session, api, history);
    await this.#append(session, records);
    session.recorded.push(...records.map((r) => r.digest));
    session.pending = null;
  }

  /** The gateway answered the agent's own compaction of `session` with `summary`, standing for `context`. */
  compacted(session: GatewaySession, summary: string, context: readonly Message[]): void {
    session.compaction = { summary, context };
  }

  /**
   * The slice whose compaction the agent's new history starts from: an item of it carries the summary the gateway
   * answered with (as it was, or after a prefix of the agent's). The slice goes on from there: the items up to that
   * one stand for the rebuilt context the summary came from, the ones after it are new.
   */
  #adoptCompaction(key: string, api: AgentApi, req: AgentRequest): GatewaySession | undefined {
    for (const session of [...(this.#slices.peek(key) ?? [])].reverse()) {
      const compaction = session.compaction;
      if (compaction === null || session.api !== api.api) continue;
      const probe = compaction.summary.slice(0, 400);
      const at = req.history.findLastIndex((item) => textOfItem(item).includes(probe));
      if (at < 0) continue;
      session.recorded = req.history.slice(0, at + 1).map((item) => itemDigest(item, api.canonical));
      session.substitution = { agentLength: at + 1, context: compaction.context };
      session.pending = null;
      session.compaction = null;
      session.rewrites++;
      this.#o.log('info', "the agent's history continues from the compaction it was answered: same session", { session: key, daemonSession: session.daemonSessionId });
      return session;
    }
    return undefined;
  }

  /** Waits for every append under way (before the gateway stops). */
  async flush(): Promise<void> {
    while (this.#appends.size > 0) await Promise.allSettled([...this.#appends]);
  }

  async #open(
    key: string,
    sessionId: string | { handoff: string },
    api: AgentApi,
    req: AgentRequest,
    headers: IncomingHttpHeaders,
    projectId: string | null,
    owner: string | null,
    from: string | null = null,
  ): Promise<{ usableWindow: number; sessionId: string; inherited: readonly Message[] | null }> {
    const fields = api.openFields(req, headers);
    if (api.api === 'openai-chat' && fields.system === undefined && req.system.length > 0) this.#o.log('warn', 'system prompt is not plain text: writers of this session run without it', { session: key });
    const request = {
      // A handoff's token names no session: the daemon answers with the one it opens (or the one it opened for it).
      ...(typeof sessionId === 'string' ? { session_id: sessionId } : { handoff: sessionId.handoff }),
      project_id: projectId ?? this.#o.projectId,
      agent: 'gateway',
      model: { id: req.model, context_window: this.#o.contextWindow(req.model) },
      ...(req.tools !== null ? { tools: req.tools.map((t) => t as Record<string, unknown>) } : {}),
      ...fields,
      ...(owner !== null ? { owner } : {}),
    };
    const opened = await this.#o.client.open(from === null ? request : { ...request, lineage: { from_session: from, kind: 'slice' } }).catch(async (err: unknown) => {
      // The slice it follows is not there to inherit from (in a cluster, another daemon may hold it) or not this
      // credential's: the conversation goes on in a slice of its own, starting blank, rather than failing.
      const refusal = err as { code?: unknown; details?: { reason?: unknown } };
      if (from === null || (refusal.code !== 'not_found' && refusal.details?.reason !== 'lineage_owner')) throw err;
      this.#o.log('warn', 'the new slice cannot start from the checkpoint of the slice it follows: it starts blank', { session: key, daemonSession: sessionId, from, error: err instanceof Error ? err.message : String(err) });
      return await this.#o.client.open(request);
    });
    if (opened.usable_window === 0) this.#o.log('warn', 'the model leaves no usable window: overflowing requests are forwarded as they are', { session: key, model: req.model });
    return { usableWindow: opened.usable_window, sessionId: opened.session_id, inherited: opened.inherited?.context ?? null };
  }

  /**
   * Before forwarding: follows the session to this request (opening it in `projectId`, default the gateway's, or a
   * new slice when the agent rewrote its history), and when the conversation overflows the usable window, records
   * what is new, asks the daemon for a rebuild and rewrites the request — also when `tooLong`: the upstream refused
   * it as longer than the window. Returns the bytes to forward and what to append once the call succeeded.
   */
  async prepare(
    key: string,
    api: AgentApi,
    req: AgentRequest,
    bytes: Uint8Array,
    options: { projectId?: string | null; tooLong?: boolean; refused?: { tokens: number | null }; headers?: IncomingHttpHeaders; owner?: string; selfContained?: boolean; handoff?: string } = {},
  ): Promise<Prepared> {
    const handoff = options.handoff;
    const owner = options.owner ?? null;
    const slices = this.#slices.get(key) ?? [];
    // Each conversation under one key keeps its own slice and rewrite: an agent that compacted or edited its history
    // gets a new slice, and another conversation on the same key (a sub-agent, a second window, a copied URL) neither
    // displaces the first one — which would then lose its rebuilt context — nor is ever given its context.
    // A handoff URL used with another credential than its claimant's: the daemon refuses the token (`handoff_used`).
    const claimant = slices[0]?.owner;
    if (handoff !== undefined && claimant !== undefined && claimant !== owner) await this.#open(key, { handoff }, api, req, options.headers ?? {}, options.projectId ?? null, owner);
    let session = this.sliceFor(key, api, req) ?? this.#adoptCompaction(key, api, req);
    if (session !== undefined && owner !== null && session.owner !== owner) {
      // Another credential than the one the slice was opened with (the first one's call failed upstream and bound
      // nothing in the gateway): the daemon hands the session over only while it has recorded nothing.
      await this.#open(key, handoff !== undefined && session.slice === 0 ? { handoff } : session.daemonSessionId, api, req, options.headers ?? {}, options.projectId ?? null, owner);
      session.owner = owner;
    }
    if (session === undefined) {
      // An agent that started over on a session the daemon has (opted in): its new slice starts from that session.
      const resumeFrom = slices.at(-1)?.daemonSessionId ?? key;
      const resume = handoff === undefined && this.#o.resumeEmpty === true && startsOver(api, req) ? await resumeGrant(this.#o.client, resumeFrom, api, req, this.#o.contextWindow(req.model)) : null;
      let slice = (slices.at(-1)?.slice ?? -1) + 1;
      const identity = agentIdentity(api, req);
      // The same agent starting over (it compacted on its own, or restarted with a new history) continues from its
      // newest slice's checkpoint; a sub-agent (another system prompt or other tools) or another credential does not.
      const from = [...slices].reverse().find((s) => s.identity === identity && s.owner === owner)?.daemonSessionId ?? null;
      if (slice > 0) this.#o.log('info', 'a history that continues no slice of the session: a new slice', { session: key, slice, ...(from !== null ? { inheritsFrom: from } : {}) });
      let opened: { usableWindow: number; sessionId: string; inherited: readonly Message[] | null } | null = null;
      // A handoff's later slices are named after the session its token opened, and carry what it inherited.
      const first = slices[0];
      const base = handoff !== undefined && first !== undefined ? first.daemonSessionId : key;
      let daemonSessionId = key;
      for (let tries = 0; opened === null; tries++) {
        daemonSessionId = slice === 0 ? key : `${base}-s${slice}`;
        try {
          const claim = resume ?? (handoff !== undefined && slice === 0 ? handoff : null);
          opened = await this.#open(key, claim !== null ? { handoff: claim } : daemonSessionId, api, req, options.headers ?? {}, options.projectId ?? null, owner, claim !== null ? null : from);
          daemonSessionId = opened.sessionId;
        } catch (err) {
          // A slice's name another credential took (by naming it as a session of its own): the next one.
          if (slice === 0 || tries >= MAX_SLICE_SKIPS || (err as { code?: unknown }).code !== 'forbidden') throw err;
          slice++;
        }
      }
      const { usableWindow } = opened;
      session = {
        key,
        daemonSessionId,
        slice,
        owner,
        api: api.api,
        identity,
        model: req.model,
        usableWindow,
        recorded: [],
        pending: null,
        substitution: null,
        rewrites: 0,
        appending: Promise.resolve(),
        calibration: null,
        compaction: null,
        stalled: false,
        rollbacks: 0,
        inherited: opened.inherited ?? first?.inherited ?? null,
      };
      slices.push(session);
      if (slices.length > MAX_SLICES) slices.shift();
      this.#slices.set(key, slices);
    }
    const toAppend = this.#newItems(session, api, req.history);
    // The request's size: the last call's reported usage (the provider's own count), plus an estimate of what is new
    // since, scaled by what the provider counts per token of each kind (a tool output it counts three times as heavy
    // is estimated so).
    const pendingTotal = usageTotal(session.pending?.reply);
    const ratios = session.calibration;
    const added = toAppend.reduce(
      (sum, r) => sum + Math.ceil(estimatedTokens(r.message.native ?? r.message) * Math.max(1, ratios === null ? 1 : r.message.role === 'tool' ? ratios.tool : ratios.text) + (ratios?.message ?? 0)),
      0,
    );
    // A usable window of 0 (the model's window is smaller than the daemon's reserves) means no overflow handling, as
    // in the daemon: every request would otherwise count as an overflow and ask for a rebuild.
    if (options.tooLong === true || (pendingTotal !== null && session.usableWindow > 0 && pendingTotal + added >= session.usableWindow)) {
      return await this.#overflow(session, api, req, bytes, toAppend, options.refused, options.selfContained === true);
    }
    return { session, body: this.#rewrite(session, api, req, bytes), toAppend, from: session.recorded.length, replyIndex: req.history.length, rewritten: session.substitution !== null || session.inherited !== null, rebuilt: false };
  }

  /**
   * Overflow: the daemon gets the whole history — what follows the newest assistant item too (the tool results the
   * model has not seen yet, a new prompt) — and replaces it with its rebuilt context, fitted into the usable window by
   * the session's calibrated count: those newest items stay whole unless one alone is too large, older outputs are
   * cleared and older steps summarised as needed. Every later call sends that context and the items after it. A
   * rebuild that fails leaves the earlier substitution (if any) in place. `refused`: the provider refused the call as
   * too long (and counted it so, when it said).
   */
  async #overflow(
    session: GatewaySession,
    api: AgentApi,
    req: AgentRequest,
    bytes: Uint8Array,
    toAppend: readonly Recorded[],
    refused: { tokens: number | null } | undefined,
    selfContained: boolean,
  ): Promise<Prepared> {
    const { history } = req;
    const cut = history.length;
    const before = toAppend;
    await session.appending;
    // The rebuild is asked for right behind the append, not once it is answered: the daemon then logs both in one
    // commit. Should the rebuild have gone first (a daemon of a cluster may take requests out of order while it renews
    // its lease), its context lacks the newest item the append brought, and it is asked for again.
    const providerRefused = refused === undefined ? {} : { provider_refused: refused.tokens === null ? {} : { tokens: refused.tokens } };
    // An agent that cannot reach the daemon's memory files gets a context that names none of them.
    const rebuild = (): Promise<RebuildReply> =>
      this.#o.client.rebuild(session.daemonSessionId, { reason: 'overflow', ...providerRefused, ...(selfContained ? { self_contained: true } : {}) });
    const lastChunk = before.length === 0 ? 0 : Math.floor((before.length - 1) / MAX_APPEND_MESSAGES) * MAX_APPEND_MESSAGES;
    await this.#append(session, before.slice(0, lastChunk));
    const appending = this.#append(session, before.slice(lastChunk));
    const pipelined = before.length > 0 ? rebuild() : null;
    // Awaited below, once the append is answered; a failure meanwhile is not an unhandled one.
    pipelined?.catch(() => {});
    await appending;
    session.recorded.push(...before.map((r) => r.digest));
    let rebuilt = false;
    try {
      let reply = await (pipelined ?? rebuild());
      const newest = before.at(-1)?.message.id;
      if (newest !== undefined && reply.context.length > 0 && !reply.context.some((m) => m.id === newest)) reply = await rebuild();
      if (reply.context.length > 0) {
        session.substitution = { agentLength: cut, context: reply.context };
        session.pending = null;
        session.rewrites++;
        rebuilt = true;
        this.#o.log('info', 'rebuilt the context on overflow', { session: session.key, outcome: reply.outcome, covered: reply.covered_up_to });
      }
    } catch (err) {
      this.#o.log('warn', 'the rebuild failed: the request goes on the context it had', { session: session.key, error: err instanceof Error ? err.message : String(err) });
    }
    return { session, body: this.#rewrite(session, api, req, bytes), toAppend: [], from: session.recorded.length, replyIndex: history.length, rewritten: session.substitution !== null, rebuilt };
  }

  /** The history items not recorded yet, as daemon messages (the pending reply's facts on its echo's last item). */
  #newItems(session: GatewaySession, api: AgentApi, history: readonly AgentItem[]): Recorded[] {
    const out: Recorded[] = [];
    const pending = session.pending;
    const replyAt = pending === null ? -1 : Math.min(pending.index + pending.reply.items, history.length) - 1;
    for (let i = session.recorded.length; i < history.length; i++) {
      const item = api.canonical(history[i] as AgentItem);
      const digest = itemDigest(history[i] as AgentItem, api.canonical);
      const role = toRole(item, api.api);
      const reply = pending !== null && i === replyAt && role === 'assistant' ? pending.reply : null;
      const envelope = {
        id: messageId(i, digest),
        ...(reply !== null && reply.finishReason !== null ? { finish_reason: reply.finishReason } : {}),
        ...(reply?.usage !== null && reply?.usage !== undefined ? { usage: { ...reply.usage } } : {}),
      };
      const message: Message = api.api === 'openai-chat' ? ({ ...(item as unknown as Message), ...envelope }) : { ...envelope, role, content: null, native: { ...item } };
      out.push({ message, digest });
    }
    return out;
  }

  /**
   * The bytes the upstream gets: the agent's own bytes, or after a rebuild its system items, the rebuilt context and
   * the items after the replaced prefix, spliced into the conversation member (every other byte as sent).
   */
  #rewrite(session: GatewaySession, api: AgentApi, req: AgentRequest, bytes: Uint8Array): Uint8Array {
    const sub = session.substitution;
    const inherited = session.inherited ?? [];
    if (sub === null && inherited.length === 0) return bytes;
    const after = req.history.slice(sub?.agentLength ?? 0).map((item, i): Message => ({ id: `agent-${i}`, role: toRole(item, api.api), content: null, native: { ...item } }));
    // The inherited context first (Anthropic: joined with the agent's first user turn, so roles alternate), then the
    // rebuilt context if any, then the agent's own items.
    const context = [...inherited, ...(sub?.context ?? [])];
    let items = providerMessages([...context, ...after], api.api);
    if (api.api === 'anthropic-messages' && sub !== null) items = withContextBreakpoint(items, providerMessages(context, api.api).length, req);
    const text = setMember(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), api.member, JSON.stringify([...req.system, ...items]));
    return Buffer.from(text, 'utf8');
  }

  /**
   * Appends history items to the session's daemon session (in order, at most `MAX_APPEND_MESSAGES` per request), and
   * keeps the calibration the daemon reports with its state.
   */
  async #append(session: GatewaySession, records: readonly Recorded[]): Promise<void> {
    try {
      // The client splits each request further where its bytes are over the transport's max payload.
      for (let i = 0; i < records.length; i += MAX_APPEND_MESSAGES) {
        const reply = await this.#o.client.append(session.daemonSessionId, records.slice(i, i + MAX_APPEND_MESSAGES).map((r) => r.message));
        if (reply.state.calibration !== undefined) session.calibration = reply.state.calibration;
      }
    } catch (err) {
      const stalls = !session.stalled;
      session.stalled = true;
      this.#o.onRecording?.({ daemonSessionId: session.daemonSessionId, failed: true, stalls });
      this.#o.log('warn', 'recording stalled: the daemon did not take the messages of a call; the next call of the session sends them again', {
        session: session.key,
        daemonSession: session.daemonSessionId,
        error: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
    if (session.stalled && records.length > 0) {
      session.stalled = false;
      this.#o.onRecording?.({ daemonSessionId: session.daemonSessionId, failed: false, stalls: false });
      this.#o.log('info', 'recording resumed', { session: session.key, daemonSession: session.daemonSessionId });
    }
  }

  /**
   * A call succeeded: its new items count as recorded at once (the agent's next call may come before the daemon
   * has them) and are appended behind the appends before them; its reply is recorded when the agent echoes it at
   * `index`. An append the daemon refuses is forgotten, so the agent's next call carries those items again.
   */
  completed(session: GatewaySession, records: readonly Recorded[], from: number, index: number, reply: AgentReply): void {
    session.pending = { index, reply };
    // A roll-back since the call was prepared (an earlier call's append failed): its items are not the next ones to
    // record any more; the next call carries them again with the ones before them.
    if (session.recorded.length !== from) return;
    session.recorded.push(...records.map((r) => r.digest));
    const rollbacks = session.rollbacks;
    session.appending = session.appending
      .then(async () => {
        // Queued behind an append that failed: not sent, so nothing is recorded after a gap. Sent with the appends of
        // the calls that completed in the same turn of the event loop (`loopTurn`).
        if (session.rollbacks === rollbacks) await loopTurn().then(() => this.#append(session, records));
      })
      .catch(() => {
        // Logged and counted in #append; every item from this call's first on is sent again with the next call.
        session.rollbacks++;
        if (session.recorded.length > from) session.recorded.length = from;
      });
    const appending = session.appending;
    this.#appends.add(appending);
    void appending.then(() => this.#appends.delete(appending));
  }
}
