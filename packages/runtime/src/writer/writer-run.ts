import { stat } from 'node:fs/promises';
import type { ProviderApi, PublishedEventBody, WriterOutcome, WriterTrigger } from '@baton/protocol';
import {
  foldEvent,
  foldStart,
  writerMachine,
  type Task,
  type WriterEffect,
  type WriterEvent,
  type WriterInput,
  type WriterPerf,
  type Failure,
} from '@baton/actors';
import {
  DEFAULT_BUDGETS,
  HistoryStore,
  renderExtractionReflection,
  renderPrompt,
  renderValidationReflection,
  type Budgets,
  type CommitJournal,
  type Violation,
} from '@baton/memory-store';
import type { SnapshotFrom } from 'xstate';
import { writerRecordOf, writerStream, type WriterAppend, type WriterRecord } from '@baton/log-schema';
import { assertNever } from '../assert-never.ts';
import { createWriterModel } from '../model/create-writer-model.ts';
import type { ModelClients } from '../model/model-clients.ts';
import type { WriterModel } from '../model/writer-model.ts';
import type { Clock } from '../time/clock.ts';
import { classifyModelError } from './classify-error.ts';
import { batonToolDefinitions, type ToolMap } from './tool-map.ts';
import { composeWriterTask, deltaSystemPrompt } from './writer-prompt.ts';
import { allowedToolNames, runWriterTool } from './writer-tools.ts';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import { CommitThenFold } from '../pipeline/commit-then-fold.ts';
import { WriterWorkspace } from './writer-workspace.ts';

/** Everything a writer run needs, prepared by the session host when the session decides to start a writer. */
export interface WriterRunSpec {
  readonly input: WriterInput;
  readonly projectId: string;
  readonly model: string;
  readonly trigger: WriterTrigger;
  readonly watermark: string | null;
  /** The agent's provider API: the writer's requests are in it. */
  readonly api: ProviderApi;
  /**
   * Request prefix as the provider gets it: the main-slice messages up to the boundary, preceded in a chat session by
   * the agent's system messages (the other APIs carry the system prompt in `system`).
   */
  readonly prefix: readonly Record<string, unknown>[];
  /** The agent's system prompt, for APIs that carry it outside the messages (null in chat sessions and delta mode). */
  readonly system: string | readonly string[] | readonly object[] | null;
  readonly agentTools: readonly unknown[] | null;
  /** Other fields of the agent's requests, sent by fork-mode writers as the agent sends them. */
  readonly params: Readonly<Record<string, unknown>>;
  /** Extra request headers the agent's requests carry (never credentials). */
  readonly headers: Readonly<Record<string, string>>;
  /** Null in delta mode. */
  readonly toolMap: ToolMap | null;
  readonly tasks: readonly Task[];
  /**
   * The user's latest explicit requests, verbatim, shown in the task whether or not the covered range holds them (a
   * request in the kept tail is context, not covered range): §1 can always quote the user, and the validator asks
   * for a quote only when one was shown.
   */
  readonly userRequests?: readonly string[];
  /** Rules the previous writer's refused draft broke: the task says how to meet them. */
  readonly guidance?: readonly string[];
}

export interface WriterRunDeps {
  /** The SDK clients for the session's API. */
  readonly clients: ModelClients;
  readonly memoryRoot: string;
  /** This writer's staging root (`<data>/staging/<writer-id>`). */
  readonly stagingRoot: string;
  readonly history: HistoryStore;
  /** Where commits are journaled (the main thread's event log). */
  readonly journal: CommitJournal;
  /** Cluster mode: the project's memory files every daemon shares (synced before staging, committed through it). */
  readonly shared?: SharedFilesPort;
  readonly budgets?: Budgets;
  readonly threadId: number;
  readonly clock: Clock;
  /** Appends to the log and resolves when durable (the main thread owns the log). */
  appendLog(stream: string, records: readonly WriterAppend[]): Promise<unknown>;
  publish(event: PublishedEventBody<'writer.reentered'>): void;
  /** Structured log lines (forwarded to the daemon's logger). */
  log?(level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Record<string, unknown>): void;
  settled(result: { outcome: WriterOutcome; failure: Failure | null; reason: string | null; perf: WriterPerf }): void;
  /**
   * Applied to every event before it is logged and folded (the actor consumes exactly what its log holds): the host
   * removes the agent's key the writer calls the model with, which providers echo in their errors.
   */
  redact?<T>(value: T): T;
}

/**
 * Hosts one writer actor: logs every event it consumes before folding it, executes the resulting effects (model
 * calls in the session's API, sandboxed tools, validation, commit) and feeds their results back as events.
 */
export class WriterRun {
  readonly writerId: string;
  readonly #specPromise: Promise<WriterRunSpec>;
  #specValue: WriterRunSpec | null = null;
  readonly #deps: WriterRunDeps;
  readonly #abort = new AbortController();
  /** The writer's conversation with its model (from `prepare` on). */
  #model: WriterModel | null = null;
  #workspace: WriterWorkspace | null = null;
  #violations: readonly Violation[] = [];
  /** The draft and findings of the previous validation. */
  #lastDraft: { readonly hash: string; readonly findings: string } | null = null;
  #snapshot: SnapshotFrom<typeof writerMachine> | null = null;
  /** Every event the writer consumes is logged (redacted), then folded: the effects to run are the fold's. */
  readonly #pipeline = new CommitThenFold<void, WriterEvent, WriterEvent, readonly WriterEffect[]>({
    commit: async (event) => {
      await this.#log(writerRecordOf(event, this.#deps.threadId), true);
      return event;
    },
    fold: (_, event) => {
      if (this.#snapshot === null) throw new Error('writer folded before it started');
      const step = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, this.#snapshot, event);
      this.#snapshot = step.snapshot;
      return step.effects;
    },
  });
  #queue: Promise<void> = Promise.resolve();
  /** A cancellation asked for before the run started: consumed as its first event. */
  #cancelReason: string | null = null;
  #settle: () => void = () => {};
  #fail: (err: unknown) => void = () => {};
  /** Resolves when the writer settled; rejects when its executor failed (a log append, an effect that threw). */
  readonly #done = new Promise<void>((resolve, reject) => {
    this.#settle = resolve;
    this.#fail = reject;
  });

  /** `spec` may still be on its way (the prefix is read from the log); the run starts once it is there. */
  constructor(writerId: string, spec: Promise<WriterRunSpec>, deps: WriterRunDeps) {
    this.writerId = writerId;
    this.#specPromise = spec;
    this.#deps = deps;
  }

  get #spec(): WriterRunSpec {
    if (this.#specValue === null) throw new Error('writer used before it started');
    return this.#specValue;
  }

  /** The writer's own LLM calls so far (what its settlement reports, also when its executor failed). */
  get perf(): WriterPerf {
    return this.#snapshot?.context.perf ?? { calls: 0, promptTokens: 0, cachedTokens: 0 };
  }

  /** Current phase, call count and re-entries (for `status`). */
  get progress(): { phase: string; calls: number; reentries: number } {
    const c = this.#snapshot?.context;
    if (c === undefined) return { phase: 'starting', calls: 0, reentries: 0 };
    return { phase: c.phase, calls: c.calls, reentries: c.reentries };
  }

  /**
   * Starts the run; resolves when the writer has settled, rejects when its executor failed (the caller then settles
   * the writer as `failure{internal}`, so the session's slot is never left taken).
   */
  async run(): Promise<void> {
    this.#specValue = await this.#specPromise;
    const { input } = this.#spec;
    await this.#log({
      type: 'writer.started',
      payload: {
        input,
        projectId: this.#spec.projectId,
        model: this.#spec.model,
        trigger: this.#spec.trigger,
        watermark: this.#spec.watermark,
        prefixMessages: this.#spec.prefix.length,
        thread: this.#deps.threadId,
      },
    });
    const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
    this.#snapshot = start.snapshot;
    if (this.#cancelReason !== null) void this.#consume({ type: 'writer.cancel', reason: this.#cancelReason });
    else await this.#execute(start.effects);
    await this.#done;
  }

  /** Cancels the run: logged as an event like any other input; an in-flight model call is aborted. */
  cancel(reason: string): Promise<void> {
    this.#abort.abort();
    if (this.#snapshot === null) {
      this.#cancelReason ??= reason;
      return Promise.resolve();
    }
    return this.#consume({ type: 'writer.cancel', reason });
  }

  /** Logs a record, redacted unless it was made from an event `#consume` redacted already. */
  #log(record: WriterRecord, redacted = false): Promise<unknown> {
    const logged = redacted ? record : (this.#deps.redact?.(record) ?? record);
    return this.#deps.appendLog(writerStream(this.writerId), [{ ...logged, at: this.#deps.clock.now() }]);
  }

  /** Logs, then folds (the pipeline), then executes: serialised so effect results are consumed in order. */
  #consume(input: WriterEvent): Promise<void> {
    const event = this.#deps.redact?.(input) ?? input;
    const next = this.#queue.then(async () => {
      if (this.#snapshot === null || this.#snapshot.status === 'done') return;
      await this.#execute(await this.#pipeline.consume(undefined, event));
    });
    this.#queue = next.catch(async (err: unknown) => {
      // Staged edits are dropped, then the run rejects and its host settles the writer as an internal failure: once
      // the settlement is out, nothing of the writer is left in the staging tree (as after a settle effect).
      await this.#workspace?.discard().catch(() => {});
      this.#fail(err);
    });
    return next;
  }

  async #execute(effects: readonly WriterEffect[]): Promise<void> {
    for (const effect of effects) {
      const event = await this.#perform(effect);
      if (event !== null) void this.#consume(event);
    }
  }

  async #perform(effect: WriterEffect): Promise<WriterEvent | null> {
    switch (effect.kind) {
      case 'prepare':
        return await this.#prepare();
      case 'model.call':
        return await this.#callModel(effect.nudge);
      case 'tools.run': {
        const ctx = { files: this.#ws().files, tasks: this.#spec.tasks, toolMap: this.#spec.toolMap };
        const results = [];
        for (const call of effect.calls) results.push(await runWriterTool(call, ctx));
        this.#conversation().addToolOutputs(results.map((r) => ({ id: r.id, name: r.name, output: r.output })));
        return { type: 'tools.completed', results };
      }
      case 'validate': {
        // §1 must quote the user only when the writer was shown a request of theirs to quote.
        const userRequestExists = (this.#spec.userRequests ?? []).length > 0;
        const verdict = await this.#ws().validate(userRequestExists);
        this.#violations = verdict.violations;
        const rules = [...new Set(verdict.violations.filter((v) => v.severity === 'error').map((v) => v.rule))];
        // A draft the writer left as it was after a reflection, with the same findings: reflecting again changes nothing.
        const findings = JSON.stringify([verdict.errors, verdict.extract]);
        const unchanged = this.#lastDraft !== null && this.#lastDraft.hash === verdict.draftHash && this.#lastDraft.findings === findings;
        this.#lastDraft = { hash: verdict.draftHash, findings };
        return {
          type: 'validation.completed',
          errors: verdict.errors,
          extract: verdict.extract,
          warnings: verdict.warnings,
          ...(rules.length > 0 ? { rules } : {}),
          ...(unchanged ? { unchanged } : {}),
        };
      }
      case 'commit':
        try {
          const { files, conflicts } = await this.#ws().commit();
          if (conflicts.length > 0) {
            this.#deps.log?.('warn', 'memory files changed by another writer since they were staged were not overwritten', { writerId: this.writerId, conflicts });
          }
          return { type: 'commit.completed', files, ...(conflicts.length > 0 ? { conflicts } : {}) };
        } catch (err) {
          return { type: 'commit.failed', message: err instanceof Error ? err.message : String(err) };
        }
      case 'quarantine':
        await this.#ws().quarantine().catch(() => null);
        return null;
      case 'reentered':
        this.#deps.publish({ type: 'writer.reentered', writer_id: this.writerId, iteration: effect.iteration, kind: effect.reason });
        return null;
      case 'settle':
        // Staged edits are committed or dropped by now: nothing of this writer stays in the staging tree.
        await this.#workspace?.discard().catch(() => {});
        if (this.#snapshot !== null) {
          // The final state, for replay to check its re-fold against.
          const state = { value: this.#snapshot.value, context: this.#snapshot.context };
          await this.#log({ type: 'snapshot', payload: { state, thread: this.#deps.threadId } });
        }
        this.#deps.settled({ outcome: effect.outcome, failure: effect.failure, reason: effect.reason, perf: effect.perf });
        this.#settle();
        return null;
      default:
        return assertNever(effect, 'writer effect');
    }
  }

  #conversation(): WriterModel {
    if (this.#model === null) throw new Error('writer used before prepare');
    return this.#model;
  }

  #ws(): WriterWorkspace {
    if (this.#workspace === null) throw new Error('writer used before prepare');
    return this.#workspace;
  }

  async #prepare(): Promise<WriterEvent> {
    const spec = this.#spec;
    const hasConversation = spec.prefix.some((m) => m['role'] !== 'system');
    if (!hasConversation) {
      // No fork prefix means nothing to record: never a success.
      return { type: 'writer.prepare_failed', outcome: 'skipped', reason: 'no conversation prefix to fork' };
    }
    let progress: string;
    let inherited = false;
    try {
      this.#workspace = new WriterWorkspace({
        memoryRoot: this.#deps.memoryRoot,
        stagingRoot: this.#deps.stagingRoot,
        history: this.#deps.history,
        journal: this.#deps.journal,
        budgets: this.#deps.budgets ?? DEFAULT_BUDGETS,
        ids: { projectId: spec.projectId, sessionId: spec.input.sessionId },
        writerId: this.writerId,
        clock: () => this.#deps.clock.now(),
        ...(this.#deps.shared !== undefined ? { shared: this.#deps.shared } : {}),
      });
      await this.#workspace.prepare();
      progress = await this.#workspace.progressBlock();
      // A checkpoint before this session's first successful writer came with the session (its lineage) or a restore.
      inherited = spec.watermark === null && (await stat(this.#workspace.live.checkpoint).then(() => true, () => false));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { type: 'writer.prepare_failed', outcome: 'failure', reason: message, failure: { kind: 'other', retryable: false, message } };
    }
    const task = composeWriterTask({
      paths: this.#workspace.staged,
      tools: allowedToolNames({ toolMap: spec.toolMap }),
      tasks: spec.tasks,
      boundary: spec.input.boundary,
      watermark: spec.watermark,
      progress,
      budgets: this.#deps.budgets ?? DEFAULT_BUDGETS,
      userRequests: spec.userRequests ?? [],
      guidance: spec.guidance ?? [],
      inherited,
    });
    const fork = spec.input.mode === 'fork';
    const chatDeltaSystem = !fork && spec.api === 'openai-chat' ? [{ role: 'system', content: deltaSystemPrompt() }] : [];
    try {
      this.#model = createWriterModel(spec.api, this.#deps.clients, {
        model: spec.model,
        system: fork ? spec.system : spec.api === 'openai-chat' ? null : deltaSystemPrompt(),
        prefix: [...chatDeltaSystem, ...spec.prefix],
        tools: fork ? (spec.agentTools ?? []) : batonToolDefinitions(spec.api),
        params: fork ? spec.params : {},
        headers: spec.headers,
      });
    } catch (err) {
      const { failure } = classifyModelError(err);
      return { type: 'writer.prepare_failed', outcome: 'failure', reason: failure.message ?? 'the model cannot be called', failure };
    }
    this.#model.addUser(task);
    return { type: 'writer.prepared' };
  }

  #nudgeText(nudge: Extract<WriterEffect, { kind: 'model.call' }>['nudge']): string | null {
    if (nudge === null) return null;
    const paths = this.#ws().staged;
    if (nudge.kind === 'continuation') {
      return renderPrompt('writer-reminder', { CHECKPOINT_PATH: paths.checkpoint, MEMORY_PATH: paths.memory, NOTES_PATH: paths.notes });
    }
    const severity = nudge.kind === 'extraction' ? 'extract-required' : 'error';
    const violations = this.#violations.filter((v) => v.severity === severity);
    if (nudge.kind === 'extraction') return renderExtractionReflection(violations);
    return renderValidationReflection(violations, { checkpointPath: paths.checkpoint, memoryPath: paths.memory });
  }

  async #callModel(nudge: Extract<WriterEffect, { kind: 'model.call' }>['nudge']): Promise<WriterEvent> {
    const text = this.#nudgeText(nudge);
    const model = this.#conversation();
    if (text !== null) model.addUser(text);
    try {
      const reply = await model.call(this.#abort.signal);
      return { type: 'model.replied', ...reply, toolCalls: [...reply.toolCalls], usage: { ...reply.usage } };
    } catch (err) {
      const { failure, status } = classifyModelError(err);
      return { type: 'model.failed', failure, status };
    }
  }
}
