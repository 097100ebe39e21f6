import { type MessagePort, threadId } from 'node:worker_threads';
import { join } from 'node:path';
import { HistoryStore } from '@baton/memory-store';
import OpenAI from 'openai';
import { WorkerCommitJournal } from '../memory/worker-commit-journal.ts';
import type { AppendInput, AppendResult } from '@baton/log-schema';
import { compactConversation } from '../rebuild/compact-conversation.ts';
import { renderRebuild } from '../rebuild/render-rebuild.ts';
import { WriterRun } from '../writer/writer-run.ts';
import { HostedSession, summarize } from './session-host.ts';
import type { HostOptions, MainToWorker, WorkerError, WorkerToMain } from './worker-messages.ts';

/**
 * The actor host inside one worker thread: owns the session actors assigned to it and their writer actors.
 * Every event reaches it only after the main thread made it durable; writer events go back to the main thread
 * to be logged before they are folded.
 */
export class ActorHost {
  readonly #port: MessagePort;
  readonly #options: HostOptions;
  readonly #sessions = new Map<string, HostedSession>();
  readonly #writers = new Map<string, WriterRun>();
  readonly #pendingLogs = new Map<number, { resolve: (r: readonly AppendResult[]) => void; reject: (e: Error) => void }>();
  readonly #openai: OpenAI;
  readonly #history: HistoryStore;
  readonly #journal: WorkerCommitJournal;
  #nextId = 1;
  #stopped: () => void = () => {};
  readonly stopped = new Promise<void>((resolve) => {
    this.#stopped = resolve;
  });

  constructor(port: MessagePort, options: HostOptions) {
    this.#port = port;
    this.#options = options;
    this.#openai = new OpenAI({
      baseURL: options.model.baseURL,
      apiKey: options.model.apiKey,
      timeout: options.model.timeoutMs,
      maxRetries: options.model.maxRetries,
    });
    this.#history = new HistoryStore(options.historyDir);
    this.#journal = new WorkerCommitJournal((stream, records) => this.#appendLog(stream, records));
    port.on('message', (msg: MainToWorker) => {
      void this.#handle(msg);
    });
  }

  #send(msg: WorkerToMain): void {
    this.#port.postMessage(msg);
  }

  #reply(id: number, result: unknown): void {
    this.#send({ kind: 'reply', id, result });
  }

  #fail(id: number, err: unknown): void {
    const error: WorkerError = { code: (err as { code?: string }).code ?? 'internal', message: err instanceof Error ? err.message : String(err) };
    this.#send({ kind: 'reply', id, error });
  }

  #appendLog(stream: string, records: readonly AppendInput[]): Promise<readonly AppendResult[]> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pendingLogs.set(id, { resolve, reject });
      this.#send({ kind: 'log.append', id, stream, records });
    });
  }

  async #handle(msg: MainToWorker): Promise<void> {
    try {
      switch (msg.kind) {
        case 'log.appended': {
          const p = this.#pendingLogs.get(msg.id);
          this.#pendingLogs.delete(msg.id);
          if (msg.error !== undefined) p?.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
          else p?.resolve(msg.results ?? []);
          return;
        }
        case 'session.load': {
          const session = new HostedSession(msg.setup);
          for (const record of msg.records) session.fold(record);
          this.#sessions.set(msg.sessionId, session);
          return this.#reply(msg.id, { summary: summarize(session.snapshot), effects: [] });
        }
        case 'session.event': {
          const session = this.#sessions.get(msg.sessionId);
          if (session === undefined) throw Object.assign(new Error(`session ${msg.sessionId} is not loaded in this worker`), { code: 'not_found' });
          const reply = session.fold(msg.record);
          for (const effect of reply.effects) {
            if (effect.kind === 'writer.start') this.#startWriter(session, effect);
            else if (effect.kind === 'rebuild.render') this.#runInput(session, 'rebuild.rendered', () => renderRebuild(session, effect, { memoryRoot: this.#options.memoryRoot, caps: this.#options.rebuildCaps }));
            else if (effect.kind === 'rebuild.compact') {
              const model = this.#options.model.writerModel ?? session.setup.model;
              this.#runInput(session, 'rebuild.compacted', () => compactConversation(session, effect, { openai: this.#openai, model }));
            }
          }
          return this.#reply(msg.id, reply);
        }
        case 'session.status': {
          const session = this.#sessions.get(msg.sessionId);
          if (session === undefined) throw Object.assign(new Error(`session ${msg.sessionId} is not loaded`), { code: 'not_found' });
          const w = session.context.writer;
          const run = w === null ? undefined : this.#writers.get(w.writerId);
          return this.#reply(msg.id, {
            writer:
              w === null
                ? null
                : { id: w.writerId, started_at: session.writerStartedAt, covers_up_to: w.boundary, mode: w.mode, turn: run?.progress.calls ?? 0, reentries: run?.progress.reentries ?? 0 },
            last_outcome: session.context.lastOutcome,
          });
        }
        case 'session.context': {
          const session = this.#sessions.get(msg.sessionId);
          if (session === undefined) throw Object.assign(new Error(`session ${msg.sessionId} is not loaded`), { code: 'not_found' });
          return this.#reply(msg.id, session.conversation);
        }
        case 'writer.cancel': {
          await this.#writers.get(msg.writerId)?.cancel(msg.reason);
          return this.#reply(msg.id, { cancelled: this.#writers.has(msg.writerId) });
        }
        case 'shutdown': {
          for (const run of this.#writers.values()) await run.cancel('host shutting down').catch(() => {});
          this.#reply(msg.id, { ok: true });
          this.#port.close();
          this.#stopped();
          return;
        }
      }
    } catch (err) {
      if ('id' in msg) this.#fail(msg.id, err);
    }
  }

  /** Runs work for a session in this worker; its result enters the session as a logged input on the main thread. */
  #runInput(session: HostedSession, type: string, work: () => Promise<Record<string, unknown>>): void {
    const sessionId = session.setup.input.sessionId;
    work().then(
      (payload) => this.#send({ kind: 'session.input', sessionId, type, payload }),
      (err: unknown) => this.#send({ kind: 'log', level: 'error', msg: `${type} failed`, data: { sessionId, error: String(err) } }),
    );
  }

  #startWriter(session: HostedSession, effect: Parameters<HostedSession['writerSpec']>[0]): void {
    const sessionId = session.setup.input.sessionId;
    const spec = session.writerSpec(effect, this.#options.model.writerModel);
    session.writerStartedAt = Date.now();
    const run = new WriterRun(spec, {
      openai: this.#openai,
      memoryRoot: this.#options.memoryRoot,
      stagingRoot: join(this.#options.stagingRoot, effect.writerId),
      history: this.#history,
      journal: this.#journal,
      budgets: this.#options.budgets,
      threadId,
      clock: () => Date.now(),
      appendLog: (stream, records) => this.#appendLog(stream, records),
      publish: (event) => this.#send({ kind: 'publish', sessionId, event }),
      log: (level, msg, data) => this.#send({ kind: 'log', level, msg, ...(data !== undefined ? { data } : {}) }),
      settled: (r) => {
        this.#writers.delete(effect.writerId);
        this.#send({ kind: 'writer.settled', sessionId, writerId: effect.writerId, ...r });
      },
    });
    this.#writers.set(effect.writerId, run);
    run.run().catch((err: unknown) => {
      // A bug in the executor must still settle the slot, or the session would never write again.
      this.#writers.delete(effect.writerId);
      const message = err instanceof Error ? err.message : String(err);
      this.#send({ kind: 'log', level: 'error', msg: 'writer crashed', data: { writerId: effect.writerId, error: message } });
      this.#send({
        kind: 'writer.settled',
        sessionId,
        writerId: effect.writerId,
        outcome: 'failure',
        failure: { kind: 'other', retryable: false, message },
        reason: message,
        perf: { calls: 0, promptTokens: 0, cachedTokens: 0 },
      });
    });
  }
}
