import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatonRequestError, Mailbox, type BatonClient } from '@baton/client';
import { loopbackHosts, loopbackRefusal } from '@baton/protocol';
import type { AgentApi } from './agent-api.ts';
import type { AgentRequest } from './agent-request.ts';
import { anthropicApi } from './anthropic-api.ts';
import { chatApi } from './chat-api.ts';
import { isUsageOnlyEvent, sseEventEnd } from './chat-reply.ts';
import type { GatewayMetrics, RequestTrack } from './gateway-metrics.ts';
import { answerCompaction } from './instant-compaction.ts';
import { setMemberBytes } from './json-bytes.ts';
import { responsesApi } from './responses-api.ts';
import { MAX_ERROR_BYTES, isContextOverflowError, mayBeContextOverflow, refusedTokens } from './context-overflow-error.ts';
import { contextWindowOf } from './model-table.ts';
import { isAnthropicMessages, parseRoute } from './route.ts';
import { checkPassthroughPrefix, readRequestTarget } from './request-target.ts';
import { SessionRecorder, type Prepared } from './session-recorder.ts';
import { namedSessionOf, sessionKeyOf } from './session-key.ts';
import { AgentBodies } from './agent-bodies.ts';
import { Upstream, downstreamHeaders, upstreamHeaders } from './upstream.ts';
import { isEventStream, readAtMost, relay, type Refusal } from './relay.ts';
import { projectOf } from './project-header.ts';
import { handoffKey } from './handoff-key.ts';
import { handoffRefusalOf } from './handoff-refusal.ts';
import { agentKeyOf } from './agent-key.ts';
import { credentialOf, ownerDigest } from './owner-secret.ts';
import { declaresJson, readBody, sendError } from './request-body.ts';
import { isSelfContained, type RebuiltContextMode } from './rebuilt-context-mode.ts';
import { SessionOwners } from './session-owners.ts';

export type GatewayLogger = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Record<string, unknown>) => void;

export interface GatewayOptions {
  /** The provider's base URL, e.g. `https://api.openai.com/v1`. */
  readonly upstream: string;
  /**
   * Where Anthropic Messages requests (`/v1/messages` and below, `count_tokens` included) go instead, e.g.
   * `https://api.anthropic.com`, so one gateway serves agents of both providers; default `upstream`.
   */
  readonly anthropicUpstream?: string;
  /** A client of the daemon (over NATS, or in-process). */
  readonly client: BatonClient;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Project the gateway's sessions belong to (default `default`); a request may say otherwise in `x-baton-project`. */
  readonly projectId?: string;
  /** Context window for models the table does not know (default 128 000). */
  readonly contextWindow?: number;
  /** Context windows by exact model id, before the table. */
  readonly contextWindows?: Readonly<Record<string, number>>;
  /**
   * How long the upstream may take to send its reply's headers, and then to send each part of its body (default
   * 10 min: a model may think for a long time); an agent whose upstream sent nothing in time gets 504.
   */
  readonly upstreamTimeoutMs?: number;
  /**
   * Whether the rebuilt contexts agents get name the daemon's memory files (`local`), name nothing the agent cannot
   * reach (`remote`: what it needs is in the request), or `auto` (default): `local` for an agent that connects over
   * loopback, `remote` for any other. `auto` takes the daemon to be on the gateway's machine (`baton up`); a gateway
   * whose daemon is elsewhere wants `remote`.
   */
  readonly rebuiltContext?: RebuiltContextMode;
  /**
   * Session keys the gateway follows at once (default 2 000): past it, the least recently used one is forgotten (its
   * next request re-reads its owner from the daemon and re-sends its history, which the daemon deduplicates).
   */
  readonly maxSessions?: number;
  /** A session key unused this long is forgotten the same way (default 6 h). */
  readonly sessionIdleMs?: number;
  /** The clock the gateway's bounds and re-checks are timed by (ms; default `performance.now`). */
  readonly now?: () => number;
  readonly logger?: GatewayLogger;
  /** Counts requests and times the upstream (`GatewayMetrics`). */
  readonly metrics?: GatewayMetrics;
  /**
   * Hands the key of each recorded call the upstream accepted to the daemon, for the writers of the call's daemon
   * session (an embedded daemon's `sessions.setWriterKey`, which holds it in memory only). Without it, writers call
   * the model with the daemon's own key.
   */
  readonly writerKeys?: (sessionId: string, key: string) => void;
  /**
   * The secret sessions' owners are digested under (`loadOwnerSecret(dataDir)`): a session belongs to the credential
   * that opened it, recorded in its log as a digest under this secret, so the binding holds across restarts only with
   * the same secret. Default: a random one for this gateway's lifetime.
   */
  readonly ownerSecret?: Uint8Array;
  /**
   * Path prefixes forwarded besides the provider API paths (e.g. `/v1/files`); any other path gets 404 from the
   * gateway. Default: none.
   */
  readonly passthrough?: readonly string[];
  /**
   * How long a binding the gateway learnt refuses other credentials before it asks the daemon again (default 30 s):
   * a session rebound while the gateway kept running then takes the new key.
   */
  readonly ownerRecheckMs?: number;
  /**
   * Told when recording a daemon session stalls (`true`) and when it records again (`false`): an embedded daemon's
   * `sessions.setRecordingStalled`, so `baton sessions` shows it.
   */
  readonly recordingStalled?: (sessionId: string, stalled: boolean) => void;
  /**
   * An agent that starts over on a session name with an empty history (nothing but its new user message: a fresh
   * process after a crash) gets the session's rebuilt context inserted after its system prompt, as a handoff's is
   * (the new slice's lineage says `resume`), instead of a blank slice. Default false.
   */
  readonly resumeEmpty?: boolean;
}

/** Session keys the gateway follows at once, by default. */
const MAX_SESSIONS = 2_000;

/** How long an unused session key is remembered, by default. */
const SESSION_IDLE_MS = 6 * 3600_000;

/** How long the upstream may take, by default. */
const UPSTREAM_TIMEOUT_MS = 600_000;

/** How long a binding the gateway learnt refuses other credentials before the daemon is asked again (default). */
const OWNER_RECHECK_MS = 30_000;

/** The provider APIs the gateway records: OpenAI chat completions, the Responses API, Anthropic Messages. */
const APIS: readonly AgentApi[] = [chatApi, responsesApi, anthropicApi];

/**
 * Baton's gateway: an HTTP server that agents use as their model base URL. Requests are forwarded to the upstream
 * provider with the agent's own credentials, body bytes and streaming untouched; conversations in the OpenAI chat,
 * OpenAI Responses and Anthropic Messages APIs are recorded as daemon sessions in that API (so writers run in fork
 * mode from the agent's exact prefix), a conversation that overflows its usable window is rebuilt and sent upstream
 * as its rebuilt context without the agent noticing, and an agent's own compaction is answered from the checkpoint.
 */
export class BatonGateway {
  readonly #server: Server;
  readonly #upstream: Upstream;
  /** Anthropic Messages' own upstream, when it is not `#upstream`. */
  readonly #anthropicUpstream: Upstream | null;
  readonly #recorder: SessionRecorder;
  readonly #mailbox = new Mailbox();
  readonly #bodies = new AgentBodies();
  /** Who may use each session key, as the daemon's log says. */
  readonly #owners: SessionOwners;
  readonly #ownerSecret: Uint8Array;
  readonly #passthrough: readonly string[];
  readonly #rebuiltContext: RebuiltContextMode;
  readonly #upstreamTimeoutMs: number;
  /** The `Host` values a loopback-bound gateway answers (null: bound beyond loopback, no check); set once bound. */
  #hosts: ReadonlySet<string> | null = null;
  readonly #log: GatewayLogger;
  readonly #client: BatonClient;
  readonly #metrics: GatewayMetrics | null;
  readonly #writerKeys: ((sessionId: string, key: string) => void) | null;
  /** What each request under way turned out to be, for the metrics. */
  readonly #tracks = new WeakMap<ServerResponse, RequestTrack>();
  #closing: Promise<void> | null = null;

  private constructor(options: GatewayOptions) {
    this.#log = options.logger ?? (() => {});
    this.#client = options.client;
    this.#metrics = options.metrics ?? null;
    this.#writerKeys = options.writerKeys ?? null;
    this.#ownerSecret = options.ownerSecret ?? randomBytes(32);
    this.#passthrough = (options.passthrough ?? []).map(checkPassthroughPrefix);
    this.#rebuiltContext = options.rebuiltContext ?? 'auto';
    const now = options.now ?? (() => performance.now());
    const bounds = { max: options.maxSessions ?? MAX_SESSIONS, idleMs: options.sessionIdleMs ?? SESSION_IDLE_MS, now };
    this.#owners = new SessionOwners({ client: options.client, recheckMs: options.ownerRecheckMs ?? OWNER_RECHECK_MS, ...bounds, log: this.#log });
    this.#upstreamTimeoutMs = options.upstreamTimeoutMs ?? UPSTREAM_TIMEOUT_MS;
    this.#upstream = new Upstream(options.upstream, { timeoutMs: this.#upstreamTimeoutMs });
    this.#anthropicUpstream = options.anthropicUpstream !== undefined ? new Upstream(options.anthropicUpstream, { timeoutMs: this.#upstreamTimeoutMs }) : null;
    this.#recorder = new SessionRecorder({
      ...bounds,
      client: options.client,
      projectId: options.projectId ?? 'default',
      contextWindow: (model) => contextWindowOf(model, options.contextWindows ?? {}, options.contextWindow ?? 128_000),
      log: this.#log,
      ...(options.resumeEmpty === true ? { resumeEmpty: true } : {}),
      onRecording: (e: { daemonSessionId: string; failed: boolean; stalls: boolean }) => {
        if (e.failed) this.#metrics?.recordingFailed(e.stalls);
        else this.#metrics?.recordingResumed();
        if (e.failed && e.stalls) options.recordingStalled?.(e.daemonSessionId, true);
        if (!e.failed) options.recordingStalled?.(e.daemonSessionId, false);
      },
    });
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        this.#log('error', 'gateway request failed', { error: err instanceof Error ? err.message : String(err) });
        sendError(res, 502, 'the gateway could not complete the request', 'gateway_error');
      });
    });
  }

  /** Starts listening; resolves once the port is bound. */
  static async start(options: GatewayOptions): Promise<BatonGateway> {
    const gateway = new BatonGateway(options);
    await new Promise<void>((resolve, reject) => {
      gateway.#server.once('error', reject);
      gateway.#server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    gateway.#hosts = loopbackHosts(options.host ?? '127.0.0.1', gateway.port);
    return gateway;
  }

  /** The base URL to give an agent (`http://host:port/v1`); put `/s/<session>` before `/v1` to name a session. */
  get baseURL(): string {
    const address = this.#server.address() as AddressInfo;
    return `http://${address.address}:${address.port}/v1`;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** How many session keys the gateway follows now: whose owner it knows, and whose conversation it records. */
  get sessionsKnown(): { readonly owners: number; readonly recorded: number } {
    return { owners: this.#owners.size, recorded: this.#recorder.size };
  }

  /** Bodies of 64 KiB and more of the recorded APIs read so far: parsed whole, or from where the one before ended. */
  get bodiesParsed(): { readonly whole: number; readonly newPart: number } {
    return this.#bodies.counts;
  }

  /**
   * Stops listening and ends every connection, requests under way included (a stream being relayed ends for the agent
   * and its upstream request is aborted, so nothing of it is recorded). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      // server.close() alone waits for the requests under way, which a stalled upstream may hold for its whole timeout.
      this.#server.closeAllConnections();
      await closed;
      await this.#upstream.close();
      await this.#anthropicUpstream?.close();
      // Recorded calls still on their way to the daemon get there (a daemon that is gone does not hold this up long).
      await Promise.race([this.#recorder.flush(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    })();
    return this.#closing;
  }

  /** Follows a request for the metrics: counted once its connection closes, with the status the agent got. */
  #track(res: ServerResponse): RequestTrack {
    const track: RequestTrack = { api: 'none', route: 'passthrough', rewritten: false };
    const metrics = this.#metrics;
    if (metrics === null) return track;
    this.#tracks.set(res, track);
    res.once('close', () => metrics.requestEnded(track, res.writableFinished ? String(res.statusCode) : 'aborted'));
    return track;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const track = this.#track(res);
    // A loopback-bound gateway answers no web page: not one reaching it under another name, nor another site's.
    const hostRefusal = loopbackRefusal(this.#hosts, req.headers);
    if (hostRefusal !== null) {
      track.route = 'refused';
      sendError(res, 403, `Baton: ${hostRefusal}`, 'forbidden_host');
      return;
    }
    // Nothing is read or forwarded for a target that is not a provider API path of the upstream.
    const target = readRequestTarget(req.url ?? '/', this.#passthrough);
    if ('refusal' in target) {
      track.route = 'refused';
      sendError(res, target.refusal.status, target.refusal.message, target.refusal.code);
      return;
    }
    const { route } = target;
    const method = req.method ?? 'GET';
    const api = method === 'POST' ? APIS.find((a) => a.matches(route.endpoint)) : undefined;
    // The APIs the gateway records take JSON only: anything else (a form a web page may post without asking) is
    // refused before it is read.
    if (api !== undefined && !declaresJson(req)) {
      track.route = 'refused';
      sendError(res, 415, `Baton: ${route.endpoint} takes a JSON body (content-type: application/json)`, 'unsupported_media_type');
      return;
    }
    const body = method === 'GET' || method === 'HEAD' ? null : await readBody(req);
    // Whose call it is matters only to a body that may be recorded: a call forwarded as it is takes no digest.
    let owner = '';
    let agent: AgentRequest | null = null;
    if (body !== null && api !== undefined) {
      owner = ownerDigest(this.#ownerSecret, credentialOf(req.headers));
      agent = this.#bodies.read(api, body, owner, namedSessionOf(route.sessionId, req.headers));
    }
    if (api !== undefined) track.api = api.api;
    if (api === undefined || agent === null || body === null) {
      await this.#forward(req, res, route.upstreamPath, body, null);
      return;
    }
    // A handoff base URL: the daemon binds the session its token opens, and refuses other credentials, on every call.
    const handoff = route.handoff;
    const key = handoff !== null ? handoffKey(handoff) : sessionKeyOf(route.sessionId, req.headers, agent, owner);
    const projectId = projectOf(req.headers);
    // A session bound to another credential is refused whatever the request is (a side call, a compaction, a call
    // under a slice's own name), before anything of it is read or forwarded.
    if (handoff === null && !(await this.#owners.mayUse(key, owner))) {
      track.route = 'forbidden';
      sendError(res, 403, 'this session belongs to another credential', 'session_forbidden');
      return;
    }
    const selfContained = isSelfContained(this.#rebuiltContext, req.socket.remoteAddress);
    if (handoff === null && api.isCompaction(agent, req.headers) && this.#owners.ownerOf(key) === owner) {
      // The agent is about to replace its history with a summary: the checkpoint is that summary, with no model call.
      const answered = await this.#mailbox.run(key, () =>
        answerCompaction({ client: this.#client, recorder: this.#recorder, api, key, req: agent, res, log: this.#log, selfContained }),
      );
      if (answered) {
        track.route = 'compaction';
        return;
      }
    }
    if (this.#recorder.isSideCall(key, agent)) {
      track.route = 'side_call';
      await this.#forward(req, res, route.upstreamPath, body, null);
      return;
    }
    // One call at a time per session, in arrival order: its recording depends on the previous call's reply.
    await this.#mailbox.run(key, async () => {
      // Checked again in turn: the call before this one may have bound the session to its credential meanwhile.
      if (handoff === null && !(await this.#owners.mayUse(key, owner))) {
        track.route = 'forbidden';
        sendError(res, 403, 'this session belongs to another credential', 'session_forbidden');
        return;
      }
      const handoffOption = handoff !== null ? { handoff } : {};
      let prepared: Prepared;
      try {
        prepared = await this.#recorder.prepare(key, api, agent, body, { projectId, headers: req.headers, owner, selfContained, ...handoffOption });
      } catch (err) {
        if (err instanceof BatonRequestError && err.code === 'forbidden') {
          // The daemon's log binds the session to another credential (another gateway bound it, or an operator did):
          // the next request asks the daemon whose it is. A handoff token it refused: unknown, expired or used.
          this.#owners.forget(key);
          track.route = 'forbidden';
          const reason = handoffRefusalOf(err);
          if (handoff !== null && reason !== null) sendError(res, 403, `Baton: ${err.message}`, reason);
          else sendError(res, 403, 'this session belongs to another credential', 'session_forbidden');
          return;
        }
        // A handoff the daemon could not open is not forwarded: the agent would go on without what it was handed.
        if (handoff !== null) {
          track.route = 'refused';
          sendError(res, 502, `Baton: the handoff could not be opened: ${err instanceof Error ? err.message : String(err)}`, 'handoff_unavailable');
          return;
        }
        // The daemon could not follow (down, refused the session): the agent's call still goes through, unrecorded.
        this.#log('warn', 'forwarding without recording', { session: key, error: err instanceof Error ? err.message : String(err) });
        track.route = 'unrecorded';
        await this.#forward(req, res, route.upstreamPath, body, null);
        return;
      }
      track.route = 'recorded';
      track.rewritten = prepared.rewritten;
      const refused = await this.#forward(req, res, route.upstreamPath, prepared.body, { key, owner, api, agent, prepared, mayRebuild: true });
      if (refused === null) return;
      // The provider says the prompt is over the window (the estimate from reported usage missed it: a gateway that
      // restarted, a tokenizer that counts differently): rebuild now and send the call again, once.
      this.#log('info', 'the upstream says the context is too long: rebuilding', { session: key });
      try {
        prepared = await this.#recorder.prepare(key, api, agent, body, { projectId, tooLong: true, refused: { tokens: refusedTokens(refused.body) }, headers: req.headers, owner, selfContained, ...handoffOption });
      } catch (err) {
        this.#log('warn', 'the rebuild failed: relaying the upstream error', { session: key, error: err instanceof Error ? err.message : String(err) });
        relay(res, refused);
        return;
      }
      if (!prepared.rebuilt) {
        relay(res, refused);
        return;
      }
      track.rewritten = prepared.rewritten;
      await this.#forward(req, res, route.upstreamPath, prepared.body, { key, owner, api, agent, prepared, mayRebuild: false });
    });
  }

  /**
   * Sends the request upstream and relays the answer as it arrives: status and headers as the upstream sent them, then
   * the body chunk by chunk. For a recorded call, the reply is reassembled on the way, the call's new messages are
   * appended once the reply is complete, and nothing is recorded for a call that failed, broke off or was abandoned.
   */
  async #forward(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Uint8Array | null,
    recorded: { key: string; owner: string; api: AgentApi; agent: AgentRequest; prepared: Prepared; mayRebuild: boolean } | null,
  ): Promise<Refusal | null> {
    // The agent may have gone while the call waited (its session's previous call, a rebuild): then nothing is sent.
    if (res.destroyed) return null;
    let sent = body;
    const streamOptions = recorded?.agent.body['stream_options'] as { include_usage?: unknown } | null | undefined;
    const stripUsage = recorded !== null && recorded.api.api === 'openai-chat' && recorded.agent.stream && streamOptions?.include_usage !== true;
    if (stripUsage && sent !== null) {
      // A chat stream carries its usage only when asked: ask for it, and drop that extra chunk from what the agent gets.
      const streamOptionsJson = JSON.stringify({ ...streamOptions, include_usage: true });
      sent = setMemberBytes(Buffer.from(sent.buffer, sent.byteOffset, sent.byteLength), 'stream_options', streamOptionsJson);
    }
    const headers = upstreamHeaders(req.headers);
    // The recorder reads the reply as it passes (and may drop the usage chunk): it must not be compressed. Other calls
    // keep the agent's accept-encoding and are relayed as the upstream encoded them.
    if (recorded !== null) headers['accept-encoding'] = 'identity';
    const target = this.#anthropicUpstream !== null && isAnthropicMessages(parseRoute(path).endpoint) ? this.#anthropicUpstream : this.#upstream;
    const upstream = target.call(req.method ?? 'GET', path, headers, sent);
    res.on('close', () => {
      if (!res.writableFinished) upstream.abort();
    });
    // Durations for the metrics only.
    const sentAt = performance.now();
    let headersSeconds = 0;
    const upstreamEnded = (complete: boolean): void => {
      this.#metrics?.upstreamAnswered(this.#tracks.get(res)?.api ?? 'none', upstream.statusCode, headersSeconds, complete ? (performance.now() - sentAt) / 1000 : null);
    };
    try {
      await upstream.started;
      headersSeconds = (performance.now() - sentAt) / 1000;
    } catch (err) {
      if (upstream.aborted) return null;
      if ((err as { code?: unknown }).code === 'UND_ERR_HEADERS_TIMEOUT') {
        sendError(res, 504, `Baton: the upstream sent no reply within ${this.#upstreamTimeoutMs / 1000} s (--upstream-timeout)`, 'upstream_timeout');
        return null;
      }
      sendError(res, 502, `the upstream could not be reached: ${err instanceof Error ? err.message : String(err)}`, 'upstream_unreachable');
      return null;
    }
    if (recorded?.mayRebuild === true && mayBeContextOverflow(upstream.statusCode)) {
      // Read the (small) error before relaying it: a prompt-too-long is answered with a rebuild instead.
      const refusal: Refusal = { status: upstream.statusCode, headers: downstreamHeaders(upstream.headers), body: await readAtMost(upstream, MAX_ERROR_BYTES) };
      upstreamEnded(true);
      if (isContextOverflowError(refusal.status, refusal.body)) return refusal;
      relay(res, refusal);
      return null;
    }
    const ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
    // A body relayed byte for byte keeps the upstream's length (one write, no chunked framing); the headers of an event
    // stream go out at once (its first event may be a while), any other reply's with its first bytes.
    res.writeHead(upstream.statusCode, downstreamHeaders(upstream.headers, { keepLength: !(stripUsage && ok) }));
    if (isEventStream(upstream.headers['content-type'])) res.flushHeaders();
    // A session belongs to the first credential the upstream accepted: a call refused upstream (a mistyped key, 401)
    // claims nothing, so its owner can still use the session with the right key.
    if (ok && recorded !== null) this.#owners.claimed(recorded.key, recorded.owner);
    if (ok && recorded !== null && this.#writerKeys !== null) {
      const key = agentKeyOf(req.headers);
      if (key !== null) this.#writerKeys(recorded.prepared.session.daemonSessionId, key);
    }
    const session = recorded?.prepared.session;
    const reader = recorded !== null && ok ? recorded.api.replyReader(recorded.agent) : null;
    // The upstream waits while the agent's side is backed up (a write returned false) until it drains.
    const write = (bytes: Buffer): boolean => res.write(bytes);
    const backedUp = (): false => {
      res.once('drain', () => upstream.resume());
      return false;
    };
    // Bytes are relayed as they came, never re-encoded text (a read may end inside a multi-byte character).
    let pendingEvent: Buffer = Buffer.alloc(0);
    try {
      await upstream.consume((chunk) => {
        reader?.feed(chunk);
        if (!stripUsage || !ok) return write(chunk) || backedUp();
        // Relay whole SSE events, as the bytes they came in, leaving out the usage-only one the agent did not ask for.
        pendingEvent = pendingEvent.length === 0 ? chunk : Buffer.concat([pendingEvent, chunk]);
        let start = 0;
        let flowing = true;
        for (let end = sseEventEnd(pendingEvent, start); end > 0; end = sseEventEnd(pendingEvent, start)) {
          const event = pendingEvent.subarray(start, end);
          if (!isUsageOnlyEvent(event)) flowing = write(event) && flowing;
          start = end;
        }
        pendingEvent = pendingEvent.subarray(start);
        return flowing || backedUp();
      });
      if (pendingEvent.length > 0) res.write(pendingEvent);
      res.end();
      upstreamEnded(true);
    } catch (err) {
      upstreamEnded(false);
      // The agent went away, or the upstream broke off: the call is not complete, so its reply is not recorded.
      this.#log('debug', 'relay ended early', { error: err instanceof Error ? err.message : String(err) });
      res.destroy();
      return null;
    }
    // Only a complete call is recorded: one that failed, broke off or was abandoned by the agent leaves the session as
    // it was, and its messages are appended with the agent's next call (which carries them again).
    if (recorded === null || session === undefined || reader === null || upstream.aborted) return null;
    const reply = reader.reply();
    if (reply === null) return null;
    this.#recorder.completed(session, recorded.prepared.toAppend, recorded.prepared.from, recorded.prepared.replyIndex, reply);
    return null;
  }
}
