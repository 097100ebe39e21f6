/** What a `SessionService` is made with, and what its writer wait reports. */
import type { Failure, TailPolicy } from '@baton/actors';
import type { EventLog } from '@baton/log-schema';
import type { Encoding, PublishedEventBody, WriterOutcome } from '@baton/protocol';
import type { HostPool } from '../host/host-pool.ts';
import type { Clock } from '../time/clock.ts';
import type { Residency } from './resident-sessions.ts';
import type { Waits } from './waits.ts';

/** What `waitForWriterSettlement` reports. */
export type WaitOutcome = { outcome: WriterOutcome | 'timeout' | 'no-writer'; failure?: Failure };

export interface SessionServiceOptions {
  readonly log: EventLog;
  readonly pool: HostPool;
  readonly memoryRoot: string;
  /** The content-addressed history of the memory files (default: `history` beside the memory root). */
  readonly historyDir?: string;
  readonly clock: Clock;
  readonly newId: () => string;
  readonly waits: Waits;
  readonly residency?: Partial<Residency>;
  /** Requests one session (`perSession`, default 64) and the daemon (`total`, default 4096) may have queued. */
  readonly queue?: { readonly perSession?: number; readonly total?: number };
  readonly tail?: TailPolicy;
  /** Environment switch: `BATON_DISABLE_CHECKPOINT`. */
  readonly checkpointDisabled?: boolean;
  /** Publishes a session event on the transport (the daemon stamps `session_id` and `at`). */
  publish(sessionId: string, encoding: Encoding, event: PublishedEventBody): void;
  /** `count` more requests of the session did not fit the model's window (see `DaemonObserver.requestsOverWindow`). */
  overWindow?(sessionId: string, count: number): void;
  /** Logs a failure no request is waiting to hear of. */
  logError?(msg: string, data: Record<string, unknown>): void;
  /**
   * Whether this daemon holds the session (`Router.holds`): one it does not hold is never loaded (its requests and
   * late inputs get `unavailable`, reason `moved`). Without a cluster, every session is this daemon's.
   */
  readonly holds: (sessionId: string) => boolean;
  /** How long a handoff token lives unless its request says (default 24 h). */
  readonly handoffTtlMs?: number;
  /** The 32 random bytes of each handoff token (default: crypto's; tests may fix them). */
  readonly randomBytes?: () => Buffer;
}
