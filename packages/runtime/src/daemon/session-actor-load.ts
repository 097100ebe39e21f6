/**
 * Loading a session's actor: its newest snapshot and the inputs after it are read from the log and folded in its
 * worker (a snapshot that does not fold is set aside for a fold of every input), and the inputs a session loaded
 * after a restart needs to be usable again.
 */
import { LogRecordError, type EventLog, type SessionInputRecord, type SessionRecordSchemas, type StreamLog } from '@baton/log-schema';
import { ProtocolError } from '@baton/protocol';
import type { HostPool } from '../host/host-pool.ts';
import type { FoldReply, SessionSummary } from '../host/worker-messages.ts';
import { readSessionLoad, type SessionLoad } from './session-load.ts';

export interface ActorLoadDeps {
  readonly sessions: StreamLog<SessionRecordSchemas>;
  readonly log: EventLog;
  readonly pool: HostPool;
  /** A session whose log does not match its schema: its requests get `error` from now on. */
  quarantined(sessionId: string, error: ProtocolError): void;
  /** A load that failed in the worker: quarantines the session when `err` says so (`quarantined`). */
  quarantineOn(sessionId: string, err: unknown): void;
}

/** Reads what loading a session needs; a record that does not match its schema quarantines the session. */
export function readLoad(deps: ActorLoadDeps, sessionId: string, useSnapshot: boolean): SessionLoad {
  let load: SessionLoad | null;
  try {
    load = readSessionLoad(deps.sessions, deps.log, sessionId, useSnapshot);
  } catch (err) {
    if (!(err instanceof LogRecordError)) throw err;
    const error = new ProtocolError('quarantined', `session ${sessionId} is quarantined: ${err.message}`, { stream: err.stream, seq: err.seq, type: err.type });
    deps.quarantined(sessionId, error);
    throw error;
  }
  if (load === null) throw unknownSession(sessionId);
  return load;
}

/** The error of a session id no session has (every path that says so words it alike). */
export function unknownSession(sessionId: string): ProtocolError {
  return new ProtocolError('not_found', `unknown session ${sessionId}`);
}

/** Folds the session into its actor from its newest snapshot; what was read and the actor's first reply. */
export async function loadActor(deps: ActorLoadDeps, sessionId: string): Promise<{ load: SessionLoad; reply: FoldReply }> {
  let load = readLoad(deps, sessionId, true);
  try {
    const reply = await deps.pool.call(sessionId, 'session.load', { sessionId, setup: load.setup, snapshot: load.snapshot, records: load.records });
    return { load, reply };
  } catch (err) {
    if (load.snapshot === null || !(err instanceof ProtocolError) || err.code !== 'quarantined') {
      deps.quarantineOn(sessionId, err);
      throw err;
    }
  }
  // The snapshot may be what is wrong (one an older build wrote, say): fold every input instead.
  load = readLoad(deps, sessionId, false);
  try {
    const reply = await deps.pool.call(sessionId, 'session.load', { sessionId, setup: load.setup, snapshot: null, records: load.records });
    return { load, reply };
  } catch (again) {
    deps.quarantineOn(sessionId, again);
    throw again;
  }
}

/**
 * Why a session's previous actor is gone: null when it went with the previous process (a restart), else the exit of
 * the worker thread it lived on in this process (its message).
 */
export type ActorLoss = string | null;

/**
 * What a session loaded again may still carry of its previous actor, in order, each judged on the session's summary
 * after the input of the step before was folded: the input that clears it, or null. `settlement` gives the settlement
 * of a writer that held the slot when the previous process ended (`restartSettlement`: the outcome its own stream
 * reached, else cancelled).
 */
export const RESTART_STEPS: readonly ((summary: SessionSummary, draining: boolean, lost: ActorLoss, settlement: (writerId: string) => SessionInputRecord) => SessionInputRecord | null)[] = [
  // The rebuild's requester went with the previous process (or was answered `unavailable` when the worker died):
  // drop it so the session can rebuild again.
  (s, _draining, lost) => (s.rebuildRequestId !== null ? { type: 'rebuild.abandoned', payload: { requestId: s.rebuildRequestId, reason: lost ?? 'daemon restarted' } } : null),
  // The drain was the previous process's (its shutdown): this daemon lets writers start again.
  (s, draining) => (s.draining && !draining ? { type: 'drain.lifted', payload: {} } : null),
  // The writer that held the slot ended with the previous process (settled in its own stream, or not at all), or died
  // with its worker thread (a failure of Baton's own, `internal`): settle it so the session can write again.
  (s, _draining, lost, settlement) =>
    s.writerId === null
      ? null
      : lost === null
        ? settlement(s.writerId)
        : {
            type: 'writer.settled',
            payload: {
              writerId: s.writerId,
              outcome: 'failure',
              failure: { kind: 'internal', retryable: true, message: `the writer's ${lost}` },
              reason: lost,
            },
          },
];
