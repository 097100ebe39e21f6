import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import { isWorkerEffect, type SessionWorkerEffect } from '@baton/actors';
import { HistoryStore, countTokensOnce, memoryPaths } from '@baton/memory-store';
import { sessionStream, type SessionSetup, type SessionSnapshot, type StoredSessionRecord } from '@baton/log-schema';
import { ProtocolError } from '@baton/protocol';
import type { SharedCommitRequest } from '../memory/shared-files-port.ts';
import { WorkerCommitJournal } from '../memory/worker-commit-journal.ts';
import { compactConversation } from './compact-conversation.ts';
import { renderRebuild } from './render-rebuild.ts';
import { renderHandoff } from './render-handoff.ts';
import type { Clock } from '../time/clock.ts';
import { latestUserRequests } from '../writer/user-requests.ts';
import { WriterRun } from '../writer/writer-run.ts';
import { assertNever } from '../assert-never.ts';
import { PortRpc } from './port-rpc.ts';
import { HostedSession, summarize, type MessageSource } from './session-host.ts';
import { redactKey } from './redact-key.ts';
import { WriterClients } from './writer-clients.ts';
import type { FileTokens, HostOptions, MainSide, SessionStatusInfo, WorkerSide, WriterSettledNote } from './worker-messages.ts';

/** Newest main-slice messages searched for the user's latest requests a writer is shown. */
const USER_REQUEST_WINDOW = 200;

/** A memory file's existence and real-token size (0 when it is missing). */
async function fileTokens(path: string): Promise<FileTokens> {
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? { exists: false, tokens: 0 } : { exists: true, tokens: countTokensOnce(text) };
}

/** A session from its setup and snapshot; a snapshot that does not restore fails with `quarantined`, naming it. */
function restore(setup: SessionSetup, snapshot: SessionSnapshot | null): HostedSession {
  try {
    return new HostedSession(setup, snapshot);
  } catch (err) {
    if (snapshot === null) throw err;
    const sessionId = setup.input.sessionId;
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ProtocolError('quarantined', `session ${sessionId} is quarantined: its snapshot (for #${snapshot.for}) does not restore: ${reason}`, {
      stream: sessionStream(sessionId),
      seq: snapshot.for,
      type: 'snapshot',
    });
  }
}

/**
 * The actor host inside one worker thread: owns the session actors assigned to it and their writer actors, and runs
 * the session effects that belong in a worker (`SessionWorkerEffect`). Every event reaches it only after the main
 * thread made it durable; writer events go back to the main thread to be logged before they are folded.
 */
export class ActorHost {
  readonly #options: HostOptions;
  readonly #clock: Clock;
  readonly #threadId: number;
  readonly #sessions = new Map<string, HostedSession>();
  readonly #writers = new Map<string, WriterRun>();
  readonly #rpc: PortRpc<WorkerSide, MainSide>;
  readonly #clients: WriterClients;
  readonly #history: HistoryStore;
  readonly #journal: WorkerCommitJournal;
  /** Message bodies come from the main thread's event log. */
  readonly #source: MessageSource = {
    messages: (sessionId, ids) => (ids.length === 0 ? Promise.resolve([]) : this.#rpc.call('log.messages', { sessionId, ids })),
    recentMain: (sessionId, limit) => this.#rpc.call('log.recentMain', { sessionId, limit }),
  };
  #stopped: () => void = () => {};
  readonly stopped = new Promise<void>((resolve) => {
    this.#stopped = resolve;
  });

  constructor(port: MessagePort, options: HostOptions, env: { clock: Clock; threadId: number }) {
    this.#options = options;
    this.#clock = env.clock;
    this.#threadId = env.threadId;
    this.#clients = new WriterClients(options.model, options.anthropic);
    this.#history = new HistoryStore(options.historyDir);
    this.#journal = new WorkerCommitJournal((stream, records) => this.#rpc.call('log.append', { stream, records }));
    this.#rpc = new PortRpc<WorkerSide, MainSide>(port, {
      calls: {
        'session.load': ({ sessionId, setup, snapshot, records }) => {
          const session = restore(setup, snapshot);
          for (const record of records) this.#foldOrQuarantine(session, record);
          this.#sessions.set(sessionId, session);
          return { summary: summarize(session.snapshot), effects: [], context: null };
        },
        'session.fold': async ({ sessionId, record }) => {
          const session = this.#session(sessionId);
          const step = this.#foldOrQuarantine(session, record);
          // The new context goes with a rebuild's answer; its ids are taken before anything else can change them.
          const answersWithContext = step.effects.some((e) => e.kind === 'rebuild.reply' && e.withContext);
          const context = answersWithContext ? session.resolve(session.contextIds(), this.#source) : null;
          for (const effect of step.effects) if (isWorkerEffect(effect)) this.#runEffect(session, effect);
          return { ...step, context: context === null ? null : await context };
        },
        'session.status': ({ sessionId }) => this.#status(this.#session(sessionId)),
        'session.snapshot': ({ sessionId }) => this.#session(sessionId).toSnapshot(),
        'session.handoff': ({ sessionId, id, to, model }) =>
          renderHandoff(this.#session(sessionId), { id, to, model }, { memoryRoot: this.#options.memoryRoot, caps: this.#options.rebuildCaps, source: this.#source }),
        'session.unload': ({ sessionId }) => {
          this.#sessions.delete(sessionId);
          this.#clients.setKey(sessionId, null);
          return {};
        },
        'session.writerKey': ({ sessionId, key }) => {
          this.#clients.setKey(sessionId, key);
          return {};
        },
        'writer.cancel': async ({ writerId, reason }) => {
          const run = this.#writers.get(writerId);
          if (run === undefined) return { cancelled: false };
          await run.cancel(reason);
          return { cancelled: true };
        },
        shutdown: async () => {
          for (const run of this.#writers.values()) await run.cancel('host shutting down').catch(() => {});
          // Answered before the port closes; the task ends once the reply is out.
          setImmediate(() => {
            this.#rpc.close(new ProtocolError('unavailable', 'the actor host stopped'));
            this.#stopped();
          });
          return {};
        },
      },
      notes: {},
    });
    this.#rpc.notify('host.started', { threadId: this.#threadId });
  }

  /**
   * Folds a record; a record the session cannot fold (a bug, a damaged log) drops the session from this worker and
   * fails with `quarantined`, naming the record, so the main thread sets the session aside.
   */
  #foldOrQuarantine(session: HostedSession, record: StoredSessionRecord): ReturnType<HostedSession['fold']> {
    try {
      return session.fold(record);
    } catch (err) {
      const sessionId = session.setup.input.sessionId;
      this.#sessions.delete(sessionId);
      const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new ProtocolError('quarantined', `session ${sessionId} is quarantined: record ${record.stream}#${record.seq} (${record.type}) cannot be folded: ${reason}`, {
        stream: record.stream,
        seq: record.seq,
        type: record.type,
      });
    }
  }

  #session(sessionId: string): HostedSession {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) throw new ProtocolError('not_found', `session ${sessionId} is not loaded in this worker`);
    return session;
  }

  async #status(session: HostedSession): Promise<SessionStatusInfo> {
    const w = session.context.writer;
    const run = w === null ? undefined : this.#writers.get(w.writerId);
    const paths = memoryPaths(this.#options.memoryRoot, { projectId: session.setup.projectId, sessionId: session.setup.input.sessionId });
    const [checkpoint, memory, notes] = await Promise.all([fileTokens(paths.checkpoint), fileTokens(paths.memory), fileTokens(paths.notes)]);
    return {
      files: { checkpoint, memory, notes },
      writer:
        w === null
          ? null
          : {
              id: w.writerId,
              started_at: session.writerStartedAt ?? 0,
              covers_up_to: w.boundary,
              mode: w.mode,
              turn: run?.progress.calls ?? 0,
              reentries: run?.progress.reentries ?? 0,
            },
      lastSettledAt: session.lastSettledAt,
    };
  }

  #runEffect(session: HostedSession, effect: SessionWorkerEffect): void {
    const sessionId = session.setup.input.sessionId;
    switch (effect.kind) {
      case 'writer.start':
        this.#startWriter(session, effect);
        return;
      case 'writer.cancel': {
        // A close that waited long enough: the cancellation is logged by the writer and settles it as `cancelled`.
        const run = this.#writers.get(effect.writerId);
        run?.cancel(effect.reason).catch((err: unknown) => this.#log('error', 'writer cancel failed', { writerId: effect.writerId, error: String(err) }));
        return;
      }
      case 'rebuild.render':
        renderRebuild(session, effect, { memoryRoot: this.#options.memoryRoot, caps: this.#options.rebuildCaps, fit: this.#options.fit, source: this.#source }).then(
          (payload) => this.#rpc.notify('session.input', { sessionId, record: { type: 'rebuild.rendered', payload } }),
          (err: unknown) => this.#log('error', 'rebuild render failed', { sessionId, error: String(err) }),
        );
        return;
      case 'rebuild.compact': {
        const model = this.#options.model.writerModel ?? session.setup.model;
        // What the model call reports is redacted of the agent's key it was made with (providers echo keys in errors).
        const agentKey = this.#clients.keyOf(sessionId);
        compactConversation(session, effect, { clients: this.#clients.for(sessionId), model, source: this.#source, fit: this.#options.fit }).then(
          (payload) => this.#rpc.notify('session.input', { sessionId, record: { type: 'rebuild.compacted', payload: redactKey(payload, agentKey) } }),
          (err: unknown) => this.#log('error', 'rebuild compaction failed', { sessionId, error: redactKey(String(err), agentKey) }),
        );
        return;
      }
      default:
        assertNever(effect);
    }
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Record<string, unknown>): void {
    this.#rpc.notify('log', { level, msg, ...(data !== undefined ? { data } : {}) });
  }

  #startWriter(session: HostedSession, effect: Extract<SessionWorkerEffect, { kind: 'writer.start' }>): void {
    const sessionId = session.setup.input.sessionId;
    // The prefix is read from the log now; its ids are the context as it was when the session started the writer.
    // The user's latest requests are taken from the newest messages too (the kept tail included) and from what fitted
    // rebuilds took out: the writer is shown them even when its range does not hold them.
    const carried = session.uncovered.users;
    const spec = Promise.all([session.resolve(session.writerPrefixIds(effect), this.#source), this.#source.recentMain(sessionId, USER_REQUEST_WINDOW)]).then(([slice, recent]) =>
      session.writerSpec(effect, slice, this.#options.model.writerModel, latestUserRequests(recent, carried)),
    );
    // Everything the writer consumes and reports is redacted of the agent's key it calls the model with, if any:
    // providers echo a key in their errors, and these reach the event log, events, log lines and memory files.
    const agentKey = this.#clients.keyOf(sessionId);
    const clean = <T>(value: T): T => redactKey(value, agentKey);
    const settled = (note: Omit<WriterSettledNote, 'sessionId' | 'writerId'>): void => {
      // Once per writer: a crash after the settlement was reported must not settle it twice.
      if (!this.#writers.delete(effect.writerId)) return;
      this.#rpc.notify('writer.settled', { sessionId, writerId: effect.writerId, ...clean(note) });
    };
    const run = new WriterRun(effect.writerId, spec, {
      clients: this.#clients.for(sessionId),
      memoryRoot: this.#options.memoryRoot,
      stagingRoot: join(this.#options.stagingRoot, effect.writerId),
      history: this.#history,
      journal: this.#journal,
      ...(this.#options.sharedProjectFiles
        ? { shared: { sync: (projectId: string) => this.#rpc.call('memory.sync', { projectId }), commit: (request: SharedCommitRequest) => this.#rpc.call('memory.commit', request) } }
        : {}),
      budgets: this.#options.budgets,
      threadId: this.#threadId,
      clock: this.#clock,
      appendLog: (stream, records) => this.#rpc.call('log.append', { stream, records }),
      publish: (event) => this.#rpc.notify('publish', { sessionId, event: clean(event) }),
      log: (level, msg, data) => this.#log(level, clean(msg), clean(data)),
      settled,
      redact: clean,
    });
    this.#writers.set(effect.writerId, run);
    run.run().catch((err: unknown) => {
      // A bug in the executor, or a log that refused a record, must still settle the slot, or the session would never
      // write again.
      const message = clean(err instanceof Error ? err.message : String(err));
      this.#log('error', 'writer failed', { writerId: effect.writerId, error: message });
      const perf = run.perf;
      settled({ outcome: 'failure', failure: { kind: 'internal', retryable: false, message }, reason: message, perf });
    });
  }
}
