import type { ProtocolError } from '@baton/protocol';
import { assertNever } from '../assert-never.ts';
import type { PrefixInUseError } from './prefix-in-use.ts';

/** What a drain reports: writers that settled in time, writers still running, queued requests dropped. */
export interface DrainReport {
  readonly drained: number;
  readonly timedOut: number;
  readonly dropped: number;
}

/**
 * How start-up ended, or that it has not: `starting` (start-up repair, and in cluster mode the join, under way),
 * `serving`, `refused` (another daemon already serves this daemon's subjects: it serves nothing), `failed` (its worker
 * threads cannot start: it serves nothing, and every request gets `cause`).
 */
export type StartupState =
  | { readonly kind: 'starting' }
  | { readonly kind: 'serving' }
  | { readonly kind: 'refused'; readonly cause: PrefixInUseError }
  | { readonly kind: 'failed'; readonly cause: ProtocolError };

/**
 * The daemon's lifecycle: start-up and its outcome, then `draining` (it takes no new work; `drained` is the first
 * drain's report), `stopping` (writers cancelled, everything closed: `stopped`) and `stopped`. A drain keeps what
 * start-up came to (`startup`): `runtime.status` still says whether the daemon served, and worker threads that fail
 * during a drain are still reported.
 */
export type DaemonState =
  | StartupState
  | { readonly kind: 'draining'; readonly startup: StartupState; readonly drained: Promise<DrainReport> }
  | { readonly kind: 'stopping' | 'stopped'; readonly startup: StartupState; readonly drained: Promise<DrainReport>; readonly stopped: Promise<DrainReport> };

/** What start-up came to, whether or not the daemon drains since. */
export function startupOf(state: DaemonState): StartupState {
  switch (state.kind) {
    case 'starting':
    case 'serving':
    case 'refused':
    case 'failed':
      return state;
    case 'draining':
    case 'stopping':
    case 'stopped':
      return state.startup;
    default:
      return assertNever(state, 'daemon state');
  }
}

/** The state with start-up come to `startup` (a drain under way stays one). */
export function withStartup(state: DaemonState, startup: StartupState): DaemonState {
  switch (state.kind) {
    case 'starting':
    case 'serving':
    case 'refused':
    case 'failed':
      return startup;
    case 'draining':
    case 'stopping':
    case 'stopped':
      return { ...state, startup };
    default:
      return assertNever(state, 'daemon state');
  }
}

/** Whether the daemon drains (or stops): it accepts no new work. */
export function isDraining(state: DaemonState): boolean {
  switch (state.kind) {
    case 'starting':
    case 'serving':
    case 'refused':
    case 'failed':
      return false;
    case 'draining':
    case 'stopping':
    case 'stopped':
      return true;
    default:
      return assertNever(state, 'daemon state');
  }
}
