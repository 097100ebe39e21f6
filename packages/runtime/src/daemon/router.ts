import type { EventLog } from '@baton/log-schema';
import type { RuntimeCluster } from '@baton/protocol';
import type { SharedFilesPort } from '../memory/shared-files-port.ts';
import type { RequestDispatch } from './request-dispatch.ts';
import type { SessionService } from './session-service.ts';

/** Why the daemon does not serve yet, as `runtime.status` shows it (`not_serving`). */
export interface NotServing {
  readonly reason: string;
  readonly message: string;
  readonly attempts?: number;
}

/**
 * Where this daemon serves sessions. `LocalRouter`: alone on its subjects, every session its own. `ClusterRouter`:
 * sharing the subjects with other daemons, each session served by the one daemon that holds it. The daemon composes
 * one at start-up; every request path asks it instead of asking whether it runs in cluster mode.
 */
export interface Router {
  /** The log sessions and writers append to. */
  readonly appendLog: EventLog;
  /** Whether the host's workers commit project memory through the cluster's shared files. */
  readonly sharesProjectFiles: boolean;
  /** The shared project files, once there are any (null: none, or not joined yet). */
  sharedFiles(): SharedFilesPort | null;
  /** Whether this daemon holds a session: one it does not hold is never loaded. Without a cluster: every session. */
  readonly holds: (sessionId: string) => boolean;
  /**
   * What must hold before the daemon serves, after start-up repair (`recovered`) began: alone on its subjects
   * (rejects with `PrefixInUseError` otherwise), or joined to the cluster (until `signal` aborts).
   */
  start(recovered: Promise<void>, signal: AbortSignal): Promise<void>;
  /** Subscribes the subjects `open` and the session requests arrive on (the verbs are registered in `requests`). */
  subscribe(requests: RequestDispatch): void;
  /** Runs a session request where its session is served (in cluster mode, only while this daemon holds it). */
  sessionCall<T>(sessionId: string | null, call: () => Promise<T>): Promise<T>;
  /** What `runtime.status` says of the cluster (null: no cluster, or not joined yet). */
  clusterStatus(): RuntimeCluster | null;
  /** Why the daemon does not serve yet when this router is what it waits for (joining the cluster); else null. */
  notServing(): NotServing | null;
  /** Whether start-up waits for a join whose last attempt failed: requests are told so at once, not kept waiting. */
  joinFailing(): boolean;
  /** A drain began: new sessions go elsewhere from now on. */
  stopOpens(): void;
  /** A drain's writers are done: what this daemon had for its sessions is written and they are handed off. */
  handOff(sessions: SessionService): Promise<void>;
  /** The daemon stops: nothing more is served or followed. */
  stop(): Promise<void>;
}
