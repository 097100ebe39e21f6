import { DEFAULT_WAITS, type WriterOutcome } from '@baton/protocol';
import { stat } from 'node:fs/promises';
import {
  type Failure,
  type SessionEffect,
  type TailPolicy,
  type WriterPerf,
} from '@baton/actors';
import { memoryPaths } from '@baton/memory-store';
import type { AppendInput, EventLog, StoredRecord } from '@baton/log-schema';
import type { HostPool } from '../host/host-pool.ts';
import type { FoldReply, SessionSetup, SessionSummary } from '../host/worker-messages.ts';
import { type Encoding, type Message, ProtocolError, type OpenRequest } from '@baton/protocol';
import { EventLogCommitJournal } from '../memory/event-log-commit-journal.ts';
import { DecisionQueue } from './decision-queue.ts';
import { EffectTimers } from './effect-timers.ts';
import { FoldSignal } from './fold-signal.ts';
import { memoryFileInfo } from './memory-file-info.ts';
import { Mailbox } from './mailbox.ts';
import { sessionSetupFor } from './session-setup.ts';

/** What `waitForWriterSettlement` reports. */
export type WaitOutcome = { outcome: WriterOutcome | 'timeout' | 'no-writer'; failure?: Failure };

export function sessionStream(sessionId: string): string {
  return `session/${sessionId}`;
}

interface LoadedSession {
  readonly sessionId: string;
  readonly projectId: string;
  readonly encoding: Encoding;
  readonly seenIds: Set<string>;
  summary: SessionSummary;
  lastOutcome: Record<string, unknown> | null;
  readonly replies: Map<string, (body: Record<string, unknown>) => void>;
}

export interface SessionServiceOptions {
  readonly log: EventLog;
  readonly pool: HostPool;
  readonly memoryRoot: string;
  readonly clock: () => number;
  readonly newId: () => string;
  readonly tail?: TailPolicy;
  /** Environment switch: `BATON_DISABLE_CHECKPOINT`. */
  readonly checkpointDisabled?: boolean;
  publish(sessionId: string, encoding: Encoding, event: Record<string, unknown>): void;
}

/**
 * The sessions of one daemon on the main thread: logs every input before handing it to the session's actor in its
 * worker, executes the resulting effects, and answers protocol requests. Transport-independent.
 */
export class SessionService {
  readonly #o: SessionServiceOptions;
  readonly #sessions = new Map<string, LoadedSession>();
  readonly #mailbox = new Mailbox();
  readonly #folded = new FoldSignal();
  readonly #timers: EffectTimers;
  readonly #decisions: DecisionQueue;

  constructor(options: SessionServiceOptions) {
    this.#o = options;
    this.#timers = new EffectTimers((sessionId, timerId) => {
      this.input(sessionId, 'timer.fired', { timerId }).catch(() => {});
    });
    this.#decisions = new DecisionQueue((sessionId, records) => options.log.append(sessionStream(sessionId), records));
  }

  get loadedCount(): number {
    return this.#sessions.size;
  }

  writerCounts(): { running: number; queued: number } {
    let running = 0;
    let queued = 0;
    for (const s of this.#sessions.values()) {
      if (s.summary.writer !== 'idle') running++;
      if (s.summary.writer === 'running+pending') queued++;
    }
    return { running, queued };
  }

  #paths(projectId: string, sessionId: string) {
    const p = memoryPaths(this.#o.memoryRoot, { projectId, sessionId });
    return { root: p.root, checkpoint: p.checkpoint, memory: p.memory, notes: p.notes, tasks_dir: p.tasksDir };
  }

  async #append(sessionId: string, type: string, payload: unknown, msgId?: string): Promise<StoredRecord> {
    const input: AppendInput = { type, at: this.#o.clock(), payload, ...(msgId !== undefined ? { msgId } : {}) };
    // Decisions of earlier inputs ride in the same transaction: no commit of their own on the request path.
    const decisions = this.#decisions.take(sessionId);
    const results = await this.#o.log.append(sessionStream(sessionId), [...decisions, input]);
    const res = results.at(-1);
    if (res === undefined) throw new Error('event log returned no result');
    return { ...input, v: 1, stream: sessionStream(sessionId), seq: res.seq };
  }

  /** Folds a durable record in the session's actor and runs its effects. */
  async #fold(session: LoadedSession, record: StoredRecord): Promise<FoldReply> {
    const reply = await this.#o.pool.call<FoldReply>(session.sessionId, { kind: 'session.event', sessionId: session.sessionId, record });
    session.summary = reply.summary;
    for (const effect of reply.effects) this.#runEffect(session, effect);
    this.#folded.notify();
    this.#decisions.queue(session.sessionId, { type: 'decision', at: this.#o.clock(), payload: { for: record.seq, state: reply.summary, effects: reply.effects } });
    return reply;
  }

  #runEffect(session: LoadedSession, effect: SessionEffect): void {
    switch (effect.kind) {
      case 'publish':
        if (effect.event.type === 'writer.settled') {
          session.lastOutcome = {
            writer_id: effect.event.writer_id,
            outcome: effect.event.outcome,
            ...(effect.event.failure !== undefined ? { failure: { kind: effect.event.failure.kind, retryable: effect.event.failure.retryable } } : {}),
            watermark: effect.event.watermark,
            at: this.#o.clock(),
          };
        }
        this.#o.publish(session.sessionId, session.encoding, { ...effect.event });
        return;
      case 'reply':
        session.replies.get(effect.requestId)?.(effect.body);
        session.replies.delete(effect.requestId);
        return;
      case 'writer.start':
      case 'rebuild.render':
      case 'rebuild.compact':
        // Run by the actor host that folded the event; its result comes back as a logged input.
        return;
      case 'timer.start':
        this.#timers.start(session.sessionId, effect.timerId, effect.ms);
        return;
      case 'timer.cancel':
        this.#timers.cancel(effect.timerId);
        return;
      case 'rebuild.reply': {
        const resolve = session.replies.get(effect.requestId);
        session.replies.delete(effect.requestId);
        if (resolve === undefined) return;
        const body = { outcome: effect.outcome, covered_up_to: effect.coveredUpTo, status_text: effect.statusText };
        if (!effect.withContext) {
          resolve({ ...body, context: [] });
          return;
        }
        this.#o.pool
          .call<Message[]>(session.sessionId, { kind: 'session.context', sessionId: session.sessionId })
          .then((context) => resolve({ ...body, context }), () => resolve({ ...body, context: [] }));
        return;
      }
    }
  }

  /** Loads a session from its log into a worker (after a restart or on first use). */
  async #load(sessionId: string): Promise<LoadedSession> {
    const existing = this.#sessions.get(sessionId);
    if (existing !== undefined) return existing;
    const records = [...this.#o.log.read(sessionStream(sessionId))];
    const opened = records[0];
    if (opened === undefined || opened.type !== 'session.opened') throw new ProtocolError('not_found', `unknown session ${sessionId}`);
    const payload = opened.payload as { setup: SessionSetup; encoding: Encoding };
    const session: LoadedSession = {
      sessionId,
      projectId: payload.setup.projectId,
      encoding: payload.encoding,
      seenIds: new Set(),
      summary: undefined as unknown as SessionSummary,
      lastOutcome: null,
      replies: new Map(),
    };
    for (const r of records) {
      if (r.type === 'messages.appended') for (const m of (r.payload as { messages: Message[] }).messages) session.seenIds.add(m.id);
    }
    const reply = await this.#o.pool.call<FoldReply>(sessionId, { kind: 'session.load', sessionId, setup: payload.setup, records: records.slice(1) });
    session.summary = reply.summary;
    this.#sessions.set(sessionId, session);
    if (reply.summary.rebuildRequestId !== null) {
      // The rebuild's requester went with the previous process: drop it so the session can rebuild again.
      const record = await this.#append(sessionId, 'rebuild.abandoned', { requestId: reply.summary.rebuildRequestId, reason: 'daemon restarted' });
      await this.#fold(session, record);
    }
    if (session.summary.writerId !== null) {
      // The writer that held the slot died with the previous process: settle it so the session can write again.
      const record = await this.#append(sessionId, 'writer.settled', {
        writerId: session.summary.writerId,
        outcome: 'cancelled',
        failure: { kind: 'cancelled', retryable: true, message: 'daemon restarted while the writer ran' },
        reason: 'daemon restarted',
      });
      await this.#fold(session, record);
    }
    return session;
  }

  async open(req: OpenRequest, encoding: Encoding): Promise<Record<string, unknown>> {
    const requested = req.session_id;
    const sessionId = requested ?? this.#o.newId();
    return await this.#mailbox.run(sessionId, async () => {
      if (requested !== undefined && this.#o.log.lastSeq(sessionStream(sessionId)) > 0) {
        const session = await this.#load(sessionId);
        if (session.summary.closing) throw new ProtocolError('conflict', `session ${sessionId} is closing; open it again once it is closed`);
        if (session.projectId !== req.project_id) {
          throw new ProtocolError('conflict', `session ${sessionId} belongs to project ${session.projectId}, not ${req.project_id}`);
        }
        await this.#fold(session, await this.#append(sessionId, 'session.resumed', {}));
        return { session_id: sessionId, resumed: true, memory: this.#paths(session.projectId, sessionId), thresholds: [...(await this.#setupOf(sessionId)).input.thresholds], usable_window: session.summary.usableWindow };
      }
      const setup = sessionSetupFor(req, sessionId, { ...(this.#o.checkpointDisabled !== undefined ? { checkpointDisabled: this.#o.checkpointDisabled } : {}), ...(this.#o.tail !== undefined ? { tail: this.#o.tail } : {}) });
      await this.#append(sessionId, 'session.opened', { setup, encoding, request: req }, 'session.opened');
      await this.#load(sessionId);
      return { session_id: sessionId, resumed: false, memory: this.#paths(req.project_id, sessionId), thresholds: setup.input.thresholds, usable_window: setup.input.usableWindow };
    });
  }

  async #setupOf(sessionId: string): Promise<SessionSetup> {
    const [first] = [...this.#o.log.read(sessionStream(sessionId), { limit: 1 })];
    return (first?.payload as { setup: SessionSetup }).setup;
  }

  #requireOpen(session: LoadedSession): void {
    if (session.summary.closed) throw new ProtocolError('conflict', `session ${session.sessionId} is closed; open it again to resume`);
  }

  async append(sessionId: string, messages: readonly Message[]): Promise<Record<string, unknown>> {
    return await this.#mailbox.run(sessionId, async () => {
      const session = await this.#load(sessionId);
      this.#requireOpen(session);
      const accepted: Message[] = [];
      const batch = new Set<string>();
      for (const m of messages) {
        if (session.seenIds.has(m.id) || batch.has(m.id)) continue;
        batch.add(m.id);
        accepted.push(m);
      }
      if (accepted.length > 0) {
        const record = await this.#append(sessionId, 'messages.appended', { messages: accepted });
        for (const id of batch) session.seenIds.add(id);
        await this.#fold(session, record);
      }
      return { accepted: accepted.length, duplicates: messages.length - accepted.length, state: stateOf(session.summary) };
    });
  }

  async tasks(sessionId: string, tasks: readonly unknown[]): Promise<Record<string, unknown>> {
    return await this.#mailbox.run(sessionId, async () => {
      const session = await this.#load(sessionId);
      this.#requireOpen(session);
      await this.#fold(session, await this.#append(sessionId, 'tasks.replaced', { tasks }));
      return { count: tasks.length };
    });
  }

  /** Runs a request whose answer is a `reply` effect, possibly of a later event (close waits for the writer). */
  async #requestWithReply(sessionId: string, type: string, extra: Record<string, unknown>, check?: (session: LoadedSession) => void): Promise<Record<string, unknown>> {
    const answer = await this.#mailbox.run(sessionId, async () => {
      const session = await this.#load(sessionId);
      this.#requireOpen(session);
      check?.(session);
      const requestId = this.#o.newId();
      const replied = new Promise<Record<string, unknown>>((resolve) => session.replies.set(requestId, resolve));
      await this.#fold(session, await this.#append(sessionId, type, { requestId, ...extra }));
      // Wrapped: returning the promise itself would make the mailbox wait for the answer, which may need later inputs.
      return { replied };
    });
    return await answer.replied;
  }

  checkpoint(sessionId: string): Promise<Record<string, unknown>> {
    return this.#requestWithReply(sessionId, 'checkpoint.requested', {});
  }

  async close(sessionId: string): Promise<Record<string, unknown>> {
    await this.#requestWithReply(sessionId, 'close.requested', { waitMs: DEFAULT_WAITS.closeMs }, (s) => {
      if (s.summary.closing) throw new ProtocolError('conflict', `session ${sessionId} is already closing`);
    });
    return {};
  }

  async status(sessionId: string): Promise<Record<string, unknown>> {
    const session = await this.#mailbox.run(sessionId, () => this.#load(sessionId));
    const info = await this.#o.pool.call<{ writer: Record<string, unknown> | null }>(sessionId, { kind: 'session.status', sessionId });
    const paths = this.#paths(session.projectId, sessionId);
    const journal = new EventLogCommitJournal(this.#o.log);
    const file = (path: string) => memoryFileInfo(paths.root, path, journal);
    return {
      state: stateOf(session.summary),
      files: { checkpoint: await file(paths.checkpoint), memory: await file(paths.memory), notes: await file(paths.notes) },
      writer: info.writer,
      last_outcome: session.lastOutcome,
    };
  }

  /**
   * A result computed outside the session's mailbox (a timer, a rebuild render or compaction in the worker) enters the
   * session as a logged input.
   */
  input(sessionId: string, type: string, payload: Record<string, unknown>): Promise<void> {
    return this.#mailbox.run(sessionId, async () => {
      const session = await this.#load(sessionId);
      await this.#fold(session, await this.#append(sessionId, type, payload));
    });
  }

  /**
   * Rebuild (SPEC §2.6): the answer may come much later (after a writer, a render or a compaction), so the mailbox is
   * released while it is prepared. One rebuild at a time per session.
   */
  async rebuild(sessionId: string, reason: 'overflow' | 'manual', waitMs: number | undefined): Promise<Record<string, unknown>> {
    const answer = await this.#mailbox.run(sessionId, async () => {
      const session = await this.#load(sessionId);
      this.#requireOpen(session);
      if (session.summary.rebuilding) throw new ProtocolError('conflict', `a rebuild of session ${sessionId} is already in progress`);
      const paths = this.#paths(session.projectId, sessionId);
      const checkpointExists = await stat(paths.checkpoint).then((s) => s.isFile(), () => false);
      const requestId = this.#o.newId();
      const replied = new Promise<Record<string, unknown>>((resolve) => session.replies.set(requestId, resolve));
      const wait = waitMs ?? (reason === 'manual' ? DEFAULT_WAITS.rebuildManualMs : DEFAULT_WAITS.rebuildOverflowMs);
      await this.#fold(session, await this.#append(sessionId, 'rebuild.requested', { requestId, reason, waitMs: wait, inFlightWaitMs: DEFAULT_WAITS.rebuildInFlightMs, checkpointExists }));
      // Wrapped: returning the promise itself would make the mailbox wait for the answer, which may need later inputs.
      return { replied };
    });
    return await answer.replied;
  }

  /** Cancels every pending timer (on shutdown). */
  clearTimers(): void {
    this.#timers.clear();
  }

  /** A writer finished in a worker: its settlement enters the session like any other input. */
  writerSettled(msg: { sessionId: string; writerId: string; outcome: WriterOutcome; failure: Failure | null; reason: string | null; perf: WriterPerf }): Promise<void> {
    return this.#mailbox.run(msg.sessionId, async () => {
      const session = await this.#load(msg.sessionId);
      const rate = msg.perf.promptTokens > 0 ? msg.perf.cachedTokens / msg.perf.promptTokens : 0;
      this.#o.publish(msg.sessionId, session.encoding, {
        type: 'writer.cache_perf',
        writer_id: msg.writerId,
        status: msg.outcome === 'success' ? 'completed' : 'failed',
        total_input_tokens: msg.perf.promptTokens,
        cache_read_tokens: msg.perf.cachedTokens,
        cache_write_tokens: Math.max(0, msg.perf.promptTokens - msg.perf.cachedTokens),
        cache_hit_rate: rate,
        num_llm_calls: msg.perf.calls,
      });
      const record = await this.#append(msg.sessionId, 'writer.settled', {
        writerId: msg.writerId,
        outcome: msg.outcome,
        ...(msg.failure !== null ? { failure: msg.failure } : {}),
        ...(msg.reason !== null ? { reason: msg.reason } : {}),
      });
      await this.#fold(session, record);
    });
  }

  /**
   * Waits for the writer running in `sessionId` at call time to settle (reference §2.5: a later pending writer is not
   * awaited). `timeout` after `timeoutMs` (default 5 min) leaves the writer running; `no-writer` when none runs.
   */
  async waitForWriterSettlement(sessionId: string, timeoutMs = 300_000): Promise<WaitOutcome> {
    const session = await this.#mailbox.run(sessionId, () => this.#load(sessionId));
    const writerId = session.summary.writerId;
    if (writerId === null) return { outcome: 'no-writer' };
    const settled = (): WaitOutcome | null => {
      const last = session.lastOutcome as { writer_id: string; outcome: WriterOutcome; failure?: Failure } | null;
      return last !== null && last.writer_id === writerId ? { outcome: last.outcome, ...(last.failure !== undefined ? { failure: last.failure } : {}) } : null;
    };
    return await this.#folded.waitFor<WaitOutcome>(settled, timeoutMs, { outcome: 'timeout' });
  }

  /** Writes every queued decision record (on drain and shutdown). */
  flushDecisions(): Promise<void> {
    return this.#decisions.flushAll();
  }

  /** Writers running now, by session. */
  runningWriters(): { sessionId: string; writerId: string }[] {
    const out: { sessionId: string; writerId: string }[] = [];
    for (const s of this.#sessions.values()) if (s.summary.writerId !== null) out.push({ sessionId: s.sessionId, writerId: s.summary.writerId });
    return out;
  }

  /** Resolves when no writer runs, or after `timeoutMs`; true when none runs. */
  async waitWritersIdle(timeoutMs: number): Promise<boolean> {
    return await this.#folded.waitFor(() => (this.runningWriters().length === 0 ? true : null), timeoutMs, false);
  }

  /**
   * Drains every loaded session: queued writer requests are dropped (recorded by the `drain.requested` event) and no
   * new writer starts. Returns how many requests were dropped.
   */
  async drainSessions(): Promise<number> {
    let dropped = 0;
    await Promise.all(
      [...this.#sessions.values()].map((session) =>
        this.#mailbox.run(session.sessionId, async () => {
          if (session.summary.writer === 'running+pending') dropped++;
          await this.#fold(session, await this.#append(session.sessionId, 'drain.requested', {}));
        }),
      ),
    );
    return dropped;
  }

  /** Waits for queued session work (used on shutdown). */
  idle(): Promise<void> {
    return this.#mailbox.idle();
  }
}

export function stateOf(s: SessionSummary): Record<string, unknown> {
  return {
    tokens: s.tokens,
    usable_window: s.usableWindow,
    next_threshold: s.nextThreshold,
    watermark: s.watermark,
    writer: s.writer,
    overflow: s.overflow,
  };
}
