import { BatonRequestError } from './baton-request-error.ts';
import { TransportError } from './transport/transport-error.ts';

/**
 * Transparent failover of a client whose daemons run as a cluster: a session request that finds its daemon gone
 * reopens the session and is sent again.
 */
export interface FailoverOptions {
  /** How long one call may spend reopening and repeating, in all, before its last error is thrown. */
  readonly timeoutMs: number;
  /**
   * How long one try of a request that is safe to repeat (append, tasks, status) waits for its answer before the
   * session is opened again and the request repeated: a daemon that died holding the request never answers, and
   * without this the call waits its whole timeout first. Set it above the slowest answer a live daemon gives (a few
   * seconds); a repeat a live daemon did answer is harmless (message ids make a second delivery a no-op). Default:
   * the request's own timeout.
   */
  readonly attemptTimeoutMs?: number;
  /**
   * How long one try of `open` waits for its answer before another try is sent beside it (the earlier tries keep
   * waiting; the first answer wins): `open` goes to any daemon of the queue group, and one that is paused (a GC pause, a
   * frozen VM) holds it unanswered, while a second try most likely reaches a live one. Opening a known session again is
   * safe to repeat, and with failover a new session gets its id from the client, so its open is safe to repeat too.
   * Default: none (one try at a time, each waiting the request's own timeout).
   */
  readonly openAttemptTimeoutMs?: number;
  /** First wait between attempts to reopen (doubling up to `maxDelayMs`). Default 100 ms. */
  readonly delayMs?: number;
  /** Default 1 000 ms. */
  readonly maxDelayMs?: number;
  /** Told each time a session was opened again after its daemon was gone: how long that took and how many tries. */
  readonly onReopened?: (event: { readonly sessionId: string; readonly waitedMs: number; readonly attempts: number; readonly cause: unknown }) => void;
}

/**
 * Whether a failed request may be sent again once its session is open again: nobody answered (`no_responders`: no
 * daemon holds the session now), the daemon answered `unavailable` (it was draining, lost the session, or was not
 * ready: nothing was done), or — for requests that are safe to repeat — no answer came in time (`timeout`: the daemon
 * may have died or stopped; the request may or may not have been done).
 */
export function mayFailOver(err: unknown, repeatable: boolean): boolean {
  if (err instanceof TransportError) return err.code === 'no_responders' || (err.code === 'timeout' && repeatable);
  return err instanceof BatonRequestError && err.code === 'unavailable';
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
