import type { Failure, SessionEffect, WriterPerf } from '@baton/actors';
import type {
  AppendInput,
  AppendResult,
  SessionInputRecord,
  SessionSetup,
  SessionSnapshot,
  SessionSummary,
  StoredSessionRecord,
} from '@baton/log-schema';
import type { Budgets, RebuildCaps } from '@baton/memory-store';
import type { FitOptions } from '../rebuild/fit-costs.ts';
import type { SharedCommitRequest, SharedCommitResult } from '../memory/shared-files-port.ts';
import type { Message, ModelInfo, ProviderApi, PublishedEventBody, WriterInfo, WriterOutcome } from '@baton/protocol';
import type { RenderedHandoff } from './render-handoff.ts';

/**
 * The main ⇄ worker protocol: calls and notes over one `PortRpc` per worker host. Everything is plain data
 * (structured clone); errors cross as `{ code, message, details }` with their protocol code.
 */

/** Summary of a session's state after a fold (its schema is log-schema's: the decision records store it). */
export type { SessionSummary } from '@baton/log-schema';

/** Result of folding one record in the session's actor. */
export interface FoldReply {
  readonly summary: SessionSummary;
  /** Every effect of the transition; the worker already ran those that run there, the main thread runs the rest. */
  readonly effects: readonly SessionEffect[];
  /** The session's new context, when an effect answers a rebuild with it. */
  readonly context: readonly Message[] | null;
}

/** A memory file as the worker sees it: whether it exists and its size in real tokens. */
export interface FileTokens {
  readonly exists: boolean;
  readonly tokens: number;
}

/**
 * What `status` needs from the worker: the running writer's progress, the last settlement's time, and the session's
 * memory files (read and tokenised in the worker, never on the main thread).
 */
export interface SessionStatusInfo {
  readonly writer: WriterInfo | null;
  readonly lastSettledAt: number | null;
  readonly files: { readonly checkpoint: FileTokens; readonly memory: FileTokens; readonly notes: FileTokens };
}

/** What the worker host serves. */
export interface WorkerSide {
  readonly calls: {
    /** Loads a session from its newest snapshot (or from the start) and the input records after it. */
    readonly 'session.load': {
      request: { sessionId: string; setup: SessionSetup; snapshot: SessionSnapshot | null; records: readonly StoredSessionRecord[] };
      reply: FoldReply;
    };
    readonly 'session.fold': { request: { sessionId: string; record: StoredSessionRecord }; reply: FoldReply };
    readonly 'session.status': { request: { sessionId: string }; reply: SessionStatusInfo };
    readonly 'session.snapshot': { request: { sessionId: string }; reply: SessionSnapshot };
    /** Renders the context a handoff carries to another agent, in `to`, fitted to `model` (`renderHandoff`). */
    readonly 'session.handoff': { request: { sessionId: string; id: string; to: ProviderApi; model: ModelInfo }; reply: RenderedHandoff };
    /** Drops the session from the worker (it left memory; a later request loads it again). */
    readonly 'session.unload': { request: { sessionId: string }; reply: Record<string, never> };
    /** The key the session's writers call the model with from now on (an agent's own; null: the daemon's). */
    readonly 'session.writerKey': { request: { sessionId: string; key: string | null }; reply: Record<string, never> };
    readonly 'writer.cancel': { request: { writerId: string; reason: string }; reply: { cancelled: boolean } };
    readonly shutdown: { request: Record<string, never>; reply: Record<string, never> };
  };
  readonly notes: Record<string, never>;
}

/** A writer's settlement, reported by the worker that ran it. */
export interface WriterSettledNote {
  readonly sessionId: string;
  readonly writerId: string;
  readonly outcome: WriterOutcome;
  readonly failure: Failure | null;
  readonly reason: string | null;
  readonly perf: WriterPerf;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What the main thread serves to worker hosts. */
export interface MainSide {
  readonly calls: {
    /** Appends writer or commit records (the main thread owns the log); resolves when durable. */
    readonly 'log.append': { request: { stream: string; records: readonly AppendInput[] }; reply: readonly AppendResult[] };
    /** The bodies of messages of a session by id, in that order (ids the log does not hold are left out). */
    readonly 'log.messages': { request: { sessionId: string; ids: readonly string[] }; reply: Message[] };
    /** The newest `limit` main-slice messages ever appended to a session, oldest first. */
    readonly 'log.recentMain': { request: { sessionId: string; limit: number }; reply: Message[] };
    /** Cluster mode: brings the project's shared memory files up to date; the version of each, by path. */
    readonly 'memory.sync': { request: { projectId: string }; reply: Readonly<Record<string, number>> };
    /** Cluster mode: commits a writer's project files as their next shared versions (or reports conflicts). */
    readonly 'memory.commit': { request: SharedCommitRequest; reply: SharedCommitResult };
  };
  readonly notes: {
    readonly publish: { sessionId: string; event: PublishedEventBody };
    readonly 'writer.settled': WriterSettledNote;
    /** A result computed in the worker (rebuild render, compaction) that enters the session as a logged input. */
    readonly 'session.input': { sessionId: string; record: SessionInputRecord };
    readonly log: { level: LogLevel; msg: string; data?: Record<string, unknown> };
    /** The host started on this worker thread (its first note): the pool's measures of the thread are keyed by it. */
    readonly 'host.started': { threadId: number };
  };
}

/** Options every worker host receives. */
export interface HostOptions {
  readonly dataDir: string;
  readonly memoryRoot: string;
  readonly stagingRoot: string;
  /** Content-addressed versions of committed memory files. */
  readonly historyDir: string;
  readonly budgets: Budgets;
  readonly rebuildCaps: RebuildCaps;
  /** How much of the usable window a rebuilt request aims at, and when a writer is asked to catch up. */
  readonly fit: FitOptions;
  readonly model: { readonly baseURL: string; readonly apiKey: string; readonly writerModel: string | null; readonly timeoutMs: number; readonly maxRetries: number };
  /** The Anthropic Messages endpoint for sessions on that API (null: none configured; their writers fail with `auth`). */
  readonly anthropic: { readonly baseURL: string; readonly apiKey: string; readonly timeoutMs: number; readonly maxRetries: number } | null;
  /** Cluster mode: the project's memory files are shared by every daemon (writers sync and commit them through the main thread). */
  readonly sharedProjectFiles: boolean;
}
