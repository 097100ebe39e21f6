/** What a `BatonDaemon` is started with. */
import type { ResourceLimits } from 'node:worker_threads';
import type { TailPolicy } from '@baton/actors';
import type { Transport } from '@baton/client';
import type { EventLog } from '@baton/log-schema';
import type { LogLevel } from '../host/worker-messages.ts';
import type { Clock } from '../time/clock.ts';
import type { ClusterOptions } from './cluster-options.ts';
import type { DaemonObserver } from './daemon-observer.ts';
import type { Residency } from './session-service.ts';
import type { WaitsConfig } from './waits.ts';

export interface ModelEndpoint {
  readonly baseURL: string;
  readonly apiKey: string;
  /** Overrides the session's model for writers. */
  readonly writerModel?: string | null;
  readonly timeoutMs?: number;
  readonly maxRetries?: number;
}

export interface DaemonLogger {
  (level: LogLevel, msg: string, data?: Record<string, unknown>): void;
}

export interface DaemonOptions {
  readonly transport: Transport;
  readonly log: EventLog;
  /** `<data>`: memory tree under `<data>/memory`, staging under `<data>/staging`. */
  readonly dataDir: string;
  readonly poolSize?: number;
  /**
   * V8 limits of each worker thread (`maxOldGenerationSizeMb`, …; default `DEFAULT_WORKER_RESOURCE_LIMITS`): a worker
   * that reaches them dies alone, its sessions load again on another host and its writer settles as a failure.
   */
  readonly workerResourceLimits?: ResourceLimits;
  /** Node options of the worker threads (after those the pool needs): `--max-semi-space-size`, a preload, … */
  readonly workerExecArgv?: readonly string[];
  readonly model: ModelEndpoint;
  /**
   * The Anthropic Messages endpoint, for sessions opened with `api: "anthropic-messages"` (their writers and
   * compactions call it; without one they fail with `auth`). `writerModel` does not apply to it.
   */
  readonly anthropic?: Omit<ModelEndpoint, 'writerModel'> | null;
  readonly prefix?: string;
  /**
   * Serve the project-scoped subjects only (`<prefix>.v1.p.<project>.…`): `open` and the session verbs on the
   * unscoped v1 subjects go unanswered and events are published on the scoped subjects alone. The runtime subjects
   * (`runtime.status`, `runtime.sessions`, `runtime.drain`) stay, for operators. Default false: both are served.
   */
  readonly requireScopedSubjects?: boolean;
  /** Time and timers of the main thread (default: the system clock). */
  readonly clock?: Clock;
  readonly newId?: () => string;
  readonly tail?: TailPolicy;
  /** Every wait of the daemon (`WaitsConfigSchema`): close, rebuild, writer settlement, drain, shutdown, start-up. */
  readonly waits?: WaitsConfig;
  /** When sessions leave memory: `idleMs` (10 min), `maxResident` (no limit), `snapshotEvery` (500 inputs). */
  readonly residency?: Partial<Residency>;
  /**
   * Requests one session (`perSession`, default 64) and the whole daemon (`total`, default 4096) may have queued;
   * past either a request is answered `unavailable` (reason `overloaded`) at once.
   */
  readonly requestQueue?: { readonly perSession?: number; readonly total?: number };
  /** Largest request accepted; default the transport's max payload. */
  readonly maxRequestBytes?: number;
  readonly checkpointDisabled?: boolean;
  readonly logger?: DaemonLogger;
  /** Token budgets of checkpoint.md and MEMORY.md (`BudgetConfigSchema`); sections may not sum above a total. */
  readonly budgets?: unknown;
  /** Token caps of the rebuilt context (`RebuildCapsConfigSchema`). */
  readonly rebuildCaps?: unknown;
  /** How a rebuilt request is fitted into the usable window (`FitOptionsSchema`: `targetShare`, `lagShare`, `minSteps`). */
  readonly fit?: unknown;
  /** Cluster mode: sessions are held by one daemon of many on a NATS cluster (`ClusterOptions`). Absent: alone. */
  readonly cluster?: ClusterOptions;
  /** Told of every request answered and every session event published (the daemon's metrics). */
  readonly observer?: DaemonObserver;
  /** How long a handoff token lives unless its request says (default 24 h; `baton daemon --handoff-ttl`). */
  readonly handoffTtlMs?: number;
  /** The 32 random bytes of each handoff token (default: crypto's). */
  readonly randomBytes?: () => Buffer;
}
