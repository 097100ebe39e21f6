import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import {
  DEFAULT_HANDOFF_WAIT_MS,
  DEFAULT_WAITS,
  HandoffReplySchema,
  type HandoffReply,
  type HandoffRequest,
  contentTypeHeaders,
  decodeReply,
  encodeRequest,
  encodingFromHeaders,
  type Encoding,
  ErrorReplySchema,
  type PublishedEvent,
  type Message,
  issueDetails,
  AppendReplySchema,
  PartReplySchema,
  CheckpointReplySchema,
  CloseReplySchema,
  OpenReplySchema,
  RebuildReplySchema,
  RuntimeDrainReplySchema,
  RuntimeSessionsReplySchema,
  RuntimeStatusReplySchema,
  StatusReplySchema,
  TasksReplySchema,
  type AppendReply,
  type CheckpointReply,
  type CloseReply,
  type OpenReply,
  type RebuildReply,
  type RuntimeDrainReply,
  type RuntimeSessionsReply,
  type RuntimeSessionsRequest,
  type RuntimeStatusReply,
  type StatusReply,
  type TasksReply,
  type OpenRequest,
  type RebuildRequest,
  type TaskItem,
  subjects,
  isScopableProject,
  type ProjectSubjects,
  type SessionSubjects,
  type Subjects,
} from '@baton/protocol';
import { TransportError } from './transport/transport-error.ts';
import { appendBatches } from './append-batches.ts';
import type { Headers, ReplyMessage, Transport } from './transport/transport.ts';
import { BatonRequestError } from './baton-request-error.ts';
import { SessionEventStream, type SessionEventStreamOptions } from './session-event-stream.ts';
import { hedgedTries } from './hedged-tries.ts';
import { mayFailOver, sleep, type FailoverOptions } from './session-failover.ts';

export interface BatonClientOptions {
  /** Subject prefix. Default `baton`. */
  readonly prefix?: string;
  /** Request encoding; replies come back in the same one. Default `msgpack`. */
  readonly encoding?: Encoding;
  /** Timeout of ordinary requests. Default 30 s (slow calls get longer defaults, see each method). */
  readonly timeoutMs?: number;
  /**
   * Daemons in cluster mode: when a session's daemon is gone (no responders, `unavailable`, or a timeout for requests
   * safe to repeat), open the session again with the request this client opened it with and send the request again
   * (and retry `open` itself the same way). Default: off (errors are thrown as they come).
   */
  readonly failover?: FailoverOptions;
  /**
   * The project this client works in: its sessions' requests and events go on that project's subjects
   * (`<prefix>.v1.p.<project>.…`) even for sessions it did not open, and `runtimeSessions` lists that project's
   * sessions only. A client with a project's NATS credentials needs it. Without it, a session this client opened goes
   * on its project's subjects and any other on the unscoped ones.
   */
  readonly project?: string;
}

/** Per-call override of the request timeout. */
export interface CallOptions {
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Headroom over the daemon's own waits (writer await, drain) before the client gives up on a reply. */
const SLOW_CALL_MARGIN_MS = 60_000;
/** The daemon's default waits before it answers a slow call (a daemon configured otherwise needs `timeoutMs`). */
const REBUILD_WAIT_MS = { overflow: DEFAULT_WAITS.rebuildOverflowMs, manual: DEFAULT_WAITS.rebuildManualMs, compaction: DEFAULT_WAITS.rebuildOverflowMs } as const;

/**
 * The TypeScript client of protocol v1, over any `Transport`. Each method sends one request and resolves with the
 * validated reply; it rejects with `BatonRequestError` for an error reply (or an invalid one) and with
 * `TransportError` when the request got no reply (`timeout`, `no_responders`, `closed`, `too_large`).
 *
 * @example
 * const client = new BatonClient(await NatsTransport.connect({ servers: url }));
 * const { session_id } = await client.open({ project_id: 'repo', model: { id: 'gpt-4o', context_window: 128000 } });
 * await client.append(session_id, [{ id: 'm1', role: 'user', content: 'hello' }]);
 */
export class BatonClient {
  readonly subjects: Subjects;
  readonly encoding: Encoding;
  readonly #transport: Transport;
  readonly #timeoutMs: number;
  readonly #failover: FailoverOptions | null;
  /** With failover: the request each session was opened with, to open it again. */
  readonly #opened = new Map<string, OpenRequest>();
  /** The project subjects of each session this client opened (when its project can scope subjects). */
  readonly #scoped = new Map<string, ProjectSubjects>();
  readonly #project: ProjectSubjects | null;

  constructor(transport: Transport, options: BatonClientOptions = {}) {
    this.#transport = transport;
    this.subjects = subjects(options.prefix);
    this.encoding = options.encoding ?? 'msgpack';
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#failover = options.failover ?? null;
    this.#project = options.project === undefined ? null : this.subjects.project(options.project);
  }

  /** The subjects a session's requests and events go on: its project's when known, else the unscoped ones. */
  #on(sessionId: string): SessionSubjects {
    return this.#scoped.get(sessionId) ?? this.#project ?? this.subjects;
  }

  /** Where `open` goes for a project: its own `open` subject when its id can scope subjects. */
  /**
   * Where an `open` goes: its project's subject. A handoff's token names the project of the session it continues,
   * which the caller need not know: unless this client is fixed to a project, it goes to the unscoped subject.
   */
  #openSubject(req: OpenRequest): string {
    if (req.handoff !== undefined && this.#project === null) return this.subjects.open;
    return isScopableProject(req.project_id) ? this.subjects.project(req.project_id).open : this.subjects.open;
  }

  #remember(sessionId: string, req: OpenRequest): void {
    if (req.handoff === undefined && isScopableProject(req.project_id)) this.#scoped.set(sessionId, this.subjects.project(req.project_id));
  }

  /** Opens a new session, or resumes `req.session_id` when the daemon knows it. */
  async open(req: OpenRequest, options?: CallOptions): Promise<OpenReply> {
    if (this.#failover === null) {
      const opened = await this.#call(this.#openSubject(req), req, OpenReplySchema, options);
      this.#remember(opened.session_id, req);
      return opened;
    }
    // A try of `open` is sent again after a timeout (and, with `openAttemptTimeoutMs`, beside one still waiting), while
    // the try given up on may have created its session all the same: a new session is named here, so every try opens
    // the same one and none is left behind on a daemon, held and unknown to this client. An open with a handoff token
    // needs no name: the daemon derives the new session's id from the token, so its tries open one session too.
    const minted = req.session_id === undefined && req.handoff === undefined;
    const named = minted ? { ...req, session_id: globalThis.crypto.randomUUID() } : req;
    const { attempts: _attempts, ...answered } = await this.#openRetrying(named, options, performance.now() + this.#failover.timeoutMs);
    // An id this call chose is new: a daemon that says it resumed it was answering a later try after an earlier one
    // (still waiting, or given up on) had created it.
    const reply = minted ? { ...answered, resumed: false } : answered;
    // Opened again by its id after a failover: a handoff's token claimed it once, and is not sent again.
    const { handoff: _token, ...reopen } = req;
    this.#opened.set(reply.session_id, { ...reopen, session_id: reply.session_id });
    this.#remember(reply.session_id, req);
    return reply;
  }

  /**
   * Appends messages in order; resolves once they are durable. A request over the transport's max payload (or of
   * more than 1 000 messages) goes as several appends, in order, a message too large alone in parts
   * (`session.<sid>.part`): not atomic then — a failure may leave a prefix appended, which sending the same messages
   * again completes (message ids make a second delivery a no-op).
   */
  append(sessionId: string, messages: readonly Message[], options?: CallOptions): Promise<AppendReply> {
    // Safe to repeat: message ids make a second delivery a no-op.
    return this.#session(sessionId, true, options, (o) => this.#appendBatches(sessionId, messages, o));
  }

  async #appendBatches(sessionId: string, messages: readonly Message[], options: CallOptions | undefined): Promise<AppendReply> {
    const subject = this.#on(sessionId).append(sessionId);
    let reply: AppendReply | null = null;
    let accepted = 0;
    let duplicates = 0;
    for (const batch of appendBatches(messages, this.encoding, this.#transport.maxPayload)) {
      if (batch.kind === 'append') {
        reply = await this.#send(subject, batch.data, AppendReplySchema, options);
      } else {
        const upload = randomUUID().replaceAll('-', '');
        const partSubject = this.#on(sessionId).part(sessionId);
        for (let index = 0; index < batch.parts.length; index++) {
          const part = await this.#call(partSubject, { upload, index, count: batch.parts.length, data: batch.parts[index] }, PartReplySchema, options);
          if (part.append !== undefined) reply = { ok: true, ...part.append };
        }
        if (reply === null) throw new BatonRequestError('invalid_reply', `the daemon did not append upload ${upload}`, partSubject);
      }
      accepted += reply.accepted;
      duplicates += reply.duplicates;
    }
    if (reply === null) throw new BatonRequestError('bad_request', 'nothing to append', subject);
    return { ...reply, accepted, duplicates };
  }

  /** Replaces the session's task tree. */
  tasks(sessionId: string, tasks: readonly TaskItem[], options?: CallOptions): Promise<TasksReply> {
    const subject = this.#on(sessionId).tasks(sessionId);
    return this.#session(sessionId, true, options, (o) => this.#call(subject, { tasks }, TasksReplySchema, o));
  }

  /** Asks for a checkpoint now. */
  checkpoint(sessionId: string, options?: CallOptions): Promise<CheckpointReply> {
    const subject = this.#on(sessionId).checkpoint(sessionId);
    return this.#session(sessionId, false, options, (o) => this.#call(subject, {}, CheckpointReplySchema, o));
  }

  /**
   * Gets a rebuilt context. The daemon may first wait for a writer (`wait_ms`, else 180 s for `overflow` and
   * `compaction`, 300 s for `manual`), so the default timeout is that wait plus 60 s.
   */
  rebuild(sessionId: string, req: RebuildRequest, options?: CallOptions): Promise<RebuildReply> {
    const wait = req.wait_ms ?? REBUILD_WAIT_MS[req.reason];
    const subject = this.#on(sessionId).rebuild(sessionId);
    return this.#session(sessionId, false, options, (o) => this.#call(subject, req, RebuildReplySchema, o, wait + SLOW_CALL_MARGIN_MS));
  }

  /**
   * Grants a one-time handoff token: the reply carries it (only this once), the context rendered for `req.to`, and
   * what it was rendered from. The daemon may first wait for a running writer (`wait_ms`, default 30 s), so the default
   * timeout is that wait plus 60 s. Open with `{ handoff: token }` to continue the session.
   */
  handoff(sessionId: string, req: HandoffRequest = {}, options?: CallOptions): Promise<HandoffReply> {
    const subject = this.#on(sessionId).handoff(sessionId);
    return this.#session(sessionId, false, options, (o) => this.#call(subject, req, HandoffReplySchema, o, (req.wait_ms ?? DEFAULT_HANDOFF_WAIT_MS) + SLOW_CALL_MARGIN_MS));
  }

  status(sessionId: string, options?: CallOptions): Promise<StatusReply> {
    const subject = this.#on(sessionId).status(sessionId);
    return this.#session(sessionId, true, options, (o) => this.#call(subject, {}, StatusReplySchema, o));
  }

  /** Closes the session; a running writer is drained first (up to 120 s), so the default timeout is 180 s. */
  close(sessionId: string, options?: CallOptions): Promise<CloseReply> {
    const subject = this.#on(sessionId).close(sessionId);
    return this.#session(sessionId, false, options, (o) => this.#call(subject, {}, CloseReplySchema, o, DEFAULT_WAITS.closeMs + SLOW_CALL_MARGIN_MS));
  }

  /** The daemon's overview: sessions (resident, total, quarantined), writers, pool, memory and event log. */
  runtimeStatus(options?: CallOptions): Promise<RuntimeStatusReply> {
    return this.#call(this.subjects.runtimeStatus, {}, RuntimeStatusReplySchema, options);
  }

  /**
   * One page of the daemon's sessions, ascending by session id: at most `req.limit` (daemon default 100) after
   * `req.after`. Pass the reply's `next` as `after` for the next page; no `next` means the list is complete.
   */
  runtimeSessions(req: RuntimeSessionsRequest = {}, options?: CallOptions): Promise<RuntimeSessionsReply> {
    return this.#call(this.#project?.sessions ?? this.subjects.runtimeSessions, req, RuntimeSessionsReplySchema, options);
  }

  /** Drains the daemon, waiting up to `timeoutMs` (daemon default 120 s) for running writers. */
  drain(timeoutMs?: number, options?: CallOptions): Promise<RuntimeDrainReply> {
    const body = timeoutMs === undefined ? {} : { timeout_ms: timeoutMs };
    const wait = (timeoutMs ?? DEFAULT_WAITS.drainMs) + SLOW_CALL_MARGIN_MS;
    return this.#call(this.subjects.runtimeDrain, body, RuntimeDrainReplySchema, options, wait);
  }

  /** Subscribes to the session's events now; iterate with `for await`, end with `stop()` or `break`. */
  events(sessionId: string, options?: SessionEventStreamOptions): SessionEventStream {
    return new SessionEventStream(this.#transport, this.#on(sessionId).events(sessionId), options);
  }

  /**
   * Resolves with the first event of the session that satisfies `predicate`, published after this call. Subscribes
   * synchronously, so start waiting before triggering the event. Rejects with `TransportError('timeout')`.
   */
  waitForEvent<E extends PublishedEvent>(sessionId: string, predicate: (event: PublishedEvent) => event is E, timeoutMs?: number): Promise<E>;
  waitForEvent(sessionId: string, predicate: (event: PublishedEvent) => boolean, timeoutMs?: number): Promise<PublishedEvent>;
  waitForEvent(sessionId: string, predicate: (event: PublishedEvent) => boolean, timeoutMs = 10_000): Promise<PublishedEvent> {
    const stream = this.events(sessionId);
    return new Promise<PublishedEvent>((resolve, reject) => {
      const timer = setTimeout(() => {
        stream.stop();
        reject(new TransportError('timeout', `no matching event for session ${sessionId} within ${timeoutMs} ms`));
      }, timeoutMs);
      const settle = (): void => {
        clearTimeout(timer);
        stream.stop();
      };
      void (async () => {
        for await (const event of stream) {
          if (predicate(event)) {
            settle();
            resolve(event);
            return;
          }
        }
      })().catch((err: unknown) => {
        settle();
        reject(err instanceof Error ? err : new Error(String(err)));
      });
    });
  }

  /** Sends raw bytes and returns the raw reply: for tests of malformed payloads and foreign encodings. */
  requestRaw(subject: string, data: Uint8Array, headers?: Headers, timeoutMs?: number): Promise<ReplyMessage> {
    return this.#transport.request(subject, data, {
      timeoutMs: timeoutMs ?? this.#timeoutMs,
      ...(headers === undefined ? {} : { headers }),
    });
  }

  /**
   * A session request, with failover on: sent again after the session was opened again, while its daemon is gone
   * (`mayFailOver`) and the failover time lasts. Only sessions this client opened can be opened again.
   */
  #session<T>(sessionId: string, repeatable: boolean, options: CallOptions | undefined, call: (options: CallOptions | undefined) => Promise<T>): Promise<T> {
    const failover = this.#failover;
    if (failover === null) return call(options);
    // A request safe to repeat is given up on after `attemptTimeoutMs` (its daemon may have died holding it) and sent
    // again once the session is open again, instead of waiting out its whole timeout.
    const attempt = repeatable && failover.attemptTimeoutMs !== undefined ? { timeoutMs: Math.min(options?.timeoutMs ?? this.#timeoutMs, failover.attemptTimeoutMs) } : options;
    return this.#failingOver(sessionId, repeatable, () => call(attempt), failover);
  }

  async #failingOver<T>(sessionId: string, repeatable: boolean, call: () => Promise<T>, failover: FailoverOptions): Promise<T> {
    const deadline = performance.now() + failover.timeoutMs;
    for (;;) {
      try {
        return await call();
      } catch (err) {
        const req = this.#opened.get(sessionId);
        if (req === undefined || !mayFailOver(err, repeatable) || performance.now() >= deadline) throw err;
        const started = performance.now();
        const attempts = await this.#openRetrying(req, undefined, deadline).then((r) => r.attempts);
        failover.onReopened?.({ sessionId, waitedMs: performance.now() - started, attempts, cause: err });
      }
    }
  }

  /**
   * `open`, tried again (with growing waits) while no daemon can take it yet and `deadline` is not reached. With
   * `openAttemptTimeoutMs`, a try unanswered that long is joined by another (`hedgedTries`): one that a paused daemon
   * holds is not waited on alone, and one a live daemon answers late still counts.
   */
  async #openRetrying(req: OpenRequest, options: CallOptions | undefined, deadline: number): Promise<OpenReply & { attempts: number }> {
    const failover = this.#failover;
    let delay = failover?.delayMs ?? 100;
    const maxDelayMs = failover?.maxDelayMs ?? 1_000;
    const limit = failover?.openAttemptTimeoutMs;
    const subject = this.#openSubject(req);
    if (limit !== undefined && req.session_id !== undefined) {
      const { value, attempts } = await hedgedTries((timeoutMs) => this.#call(subject, req, OpenReplySchema, { timeoutMs }), {
        hedgeMs: limit,
        tryTimeoutMs: options?.timeoutMs ?? this.#timeoutMs,
        deadline,
        delayMs: delay,
        maxDelayMs,
        mayRetry: (err) => mayFailOver(err, true),
      });
      return { ...value, attempts };
    }
    for (let attempts = 1; ; attempts++) {
      try {
        return { ...(await this.#call(subject, req, OpenReplySchema, options)), attempts };
      } catch (err) {
        if (!mayFailOver(err, true) || performance.now() + delay >= deadline) throw err;
        await sleep(delay);
        delay = Math.min(maxDelayMs, delay * 2);
      }
    }
  }

  async #call<S extends z.ZodType>(
    subject: string,
    body: unknown,
    schema: S,
    options: CallOptions | undefined,
    minTimeoutMs = 0,
  ): Promise<z.output<S>> {
    return await this.#send(subject, encodeRequest(body, this.encoding), schema, options, minTimeoutMs);
  }

  /** `#call` with the request already encoded. */
  async #send<S extends z.ZodType>(subject: string, data: Uint8Array, schema: S, options: CallOptions | undefined, minTimeoutMs = 0): Promise<z.output<S>> {
    const reply = await this.#transport.request(subject, data, {
      timeoutMs: options?.timeoutMs ?? Math.max(this.#timeoutMs, minTimeoutMs),
      headers: contentTypeHeaders(this.encoding),
    });
    return parseReply(subject, reply, this.#replyEncoding(reply), schema);
  }

  /** The reply's own content-type when it names one, else the request's encoding (the protocol's rule). */
  #replyEncoding(reply: ReplyMessage): Encoding {
    const named = Object.keys(reply.headers).some((key) => key.toLowerCase() === 'content-type');
    return named ? encodingFromHeaders(reply.headers) : this.encoding;
  }
}

function parseReply<S extends z.ZodType>(subject: string, reply: ReplyMessage, encoding: Encoding, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = decodeReply(reply.data, encoding);
  } catch (err) {
    throw new BatonRequestError('invalid_reply', `undecodable reply from ${subject}`, subject, undefined, { cause: err });
  }
  if (typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false) {
    const failure = ErrorReplySchema.safeParse(value);
    if (!failure.success) {
      throw new BatonRequestError('invalid_reply', `malformed error reply from ${subject}`, subject, issueDetails(failure.error.issues));
    }
    const { code, message, details } = failure.data.error;
    throw new BatonRequestError(code, message, subject, details);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new BatonRequestError('invalid_reply', `malformed reply from ${subject}`, subject, issueDetails(result.error.issues));
  }
  return result.data;
}
