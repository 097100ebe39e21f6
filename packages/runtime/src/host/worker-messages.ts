import type { WriterOutcome } from '@baton/protocol';
import type { Failure, SessionEffect, SessionInput, WriterPerf } from '@baton/actors';
import type { Budgets, RebuildCaps } from '@baton/memory-store';
import type { AppendInput, AppendResult, StoredRecord } from '@baton/log-schema';

/**
 * The main ⇄ worker protocol: tagged unions with request ids, carried over one MessagePort per worker host.
 * Everything is plain data (structured clone); errors cross as `{ code, message }`.
 */

/** What a session needs in the worker besides its machine input: the agent's own request prefix parts. */
export interface SessionSetup {
  readonly input: SessionInput;
  readonly projectId: string;
  readonly model: string;
  readonly system: string | readonly string[] | null;
  readonly tools: readonly unknown[] | null;
  readonly writerTools: Readonly<Record<string, { name: string; args?: Record<string, string> }>> | null;
}

/** Summary of a session's state after a fold, enough for protocol replies. */
export interface SessionSummary {
  readonly value: unknown;
  readonly tokens: number;
  readonly usableWindow: number;
  readonly nextThreshold: number | null;
  readonly watermark: string | null;
  readonly writer: 'idle' | 'running' | 'running+pending';
  readonly writerId: string | null;
  readonly overflow: boolean;
  readonly closed: boolean;
  readonly closing: boolean;
  readonly rebuilding: boolean;
  readonly rebuildRequestId: string | null;
}

export interface WorkerError {
  readonly code: string;
  readonly message: string;
}

export type MainToWorker =
  | { readonly kind: 'session.load'; readonly id: number; readonly sessionId: string; readonly setup: SessionSetup; readonly records: readonly StoredRecord[] }
  | { readonly kind: 'session.event'; readonly id: number; readonly sessionId: string; readonly record: StoredRecord }
  | { readonly kind: 'session.status'; readonly id: number; readonly sessionId: string }
  | { readonly kind: 'session.context'; readonly id: number; readonly sessionId: string }
  | { readonly kind: 'writer.cancel'; readonly id: number; readonly writerId: string; readonly reason: string }
  | { readonly kind: 'log.appended'; readonly id: number; readonly results?: readonly AppendResult[]; readonly error?: WorkerError }
  | { readonly kind: 'shutdown'; readonly id: number };

export type WorkerToMain =
  | { readonly kind: 'reply'; readonly id: number; readonly result?: unknown; readonly error?: WorkerError }
  | { readonly kind: 'log.append'; readonly id: number; readonly stream: string; readonly records: readonly AppendInput[] }
  | { readonly kind: 'publish'; readonly sessionId: string; readonly event: Record<string, unknown> }
  | {
      readonly kind: 'writer.settled';
      readonly sessionId: string;
      readonly writerId: string;
      readonly outcome: WriterOutcome;
      readonly failure: Failure | null;
      readonly reason: string | null;
      readonly perf: WriterPerf;
    }
  /** A result computed in the worker (rebuild render, compaction) that must enter the session as a logged input. */
  | { readonly kind: 'session.input'; readonly sessionId: string; readonly type: string; readonly payload: Record<string, unknown> }
  | { readonly kind: 'log'; readonly level: 'debug' | 'info' | 'warn' | 'error'; readonly msg: string; readonly data?: Record<string, unknown> };

/** Result of `session.load` and `session.event`. */
export interface FoldReply {
  readonly summary: SessionSummary;
  readonly effects: readonly SessionEffect[];
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
  readonly model: { readonly baseURL: string; readonly apiKey: string; readonly writerModel: string | null; readonly timeoutMs: number; readonly maxRetries: number };
}
