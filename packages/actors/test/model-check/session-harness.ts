/**
 * Model-checking harness for the session machine: a labelled event generator over a small input, a context
 * abstraction for `@xstate/graph` and per-state invariants (the per-path monitor is in session-monitor.ts, the
 * memoising stepper in session-stepper.ts).
 */
import type { SnapshotFrom } from 'xstate';
import { computeBoundaryIndex, deltaStartIndex } from '../../src/boundary.ts';
import { indexEntries, indexIds } from '../../src/index-list.ts';
import { slotOf, type SessionContext } from '../../src/session-context.ts';
import type { FailureKind, WriterOutcome } from '@baton/protocol';
import type { Failure, IndexedMessage, SessionEvent, SessionInput } from '../../src/session-events.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import type { Checks, Labelled as GenericLabelled } from './graph-harness.ts';
import { backoffPeriod } from '../../src/writer-request.ts';

export type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;

/** Two rungs, a tiny window and a tiny tail policy: every decision is reachable in a few steps. */
export const MODEL_INPUT: SessionInput = {
  sessionId: 's',
  projectId: 'p',
  usableWindow: 3000,
  thresholds: [1000, 2000],
  maxAllowed: 2500,
  checkpointEnabled: true,
  memoryWriteDisabled: false,
  fork: true,
  forkUnavailableReason: null,
  tail: { minTokens: 1, maxTokens: 2, minTextMessages: 1 },
};

/** Usage totals fed by appends: below the first rung, past one rung, past both, at the cap, past the window. */
export const USAGES = [500, 1100, 2100, 2500, 3100] as const;

type Labelled = GenericLabelled<SessionEvent>;

export interface SessionGenOptions {
  /** Usage totals offered for main-slice appends. */
  readonly usages: readonly number[];
  /** Offer a subagent append (never drives thresholds). */
  readonly subagent: boolean;
  readonly manual: boolean;
  /** Settlement outcomes offered for the running writer (labels of `SETTLEMENTS`). */
  readonly settlements: readonly SettlementLabel[];
  /** Duplicate / stale / unknown writer ids. */
  readonly staleSettlements: boolean;
  readonly rebuild: boolean;
  readonly drain: boolean;
  readonly close: boolean;
  /** Also offer agent input to a closed session (the runtime refuses it with `conflict`, so no log has it). */
  readonly closedInput?: boolean;
  /** Offer fitted rebuild results that ask a writer to catch up (`catchUp`). */
  readonly catchUp?: boolean;
}

export type SettlementLabel = 'success' | `failure:${Exclude<FailureKind, 'cancelled'>}` | 'cancelled' | 'skipped';

const FAILURES: Record<Exclude<FailureKind, 'cancelled'>, Failure> = {
  transient: { kind: 'transient', retryable: true, message: '429' },
  overflow: { kind: 'overflow', retryable: false },
  auth: { kind: 'auth', retryable: false },
  validation: { kind: 'validation', retryable: false },
  internal: { kind: 'internal', retryable: false, message: 'the writer executor failed' },
  other: { kind: 'other', retryable: false },
};

export const ALL_SETTLEMENTS: readonly SettlementLabel[] = [
  'success',
  'failure:transient',
  'failure:overflow',
  'failure:auth',
  'failure:validation',
  'failure:other',
  'cancelled',
  'skipped',
];

export const FULL_GEN: SessionGenOptions = {
  usages: USAGES,
  subagent: true,
  manual: true,
  settlements: ALL_SETTLEMENTS,
  staleSettlements: true,
  rebuild: true,
  drain: true,
  close: true,
};

/** The model check's generators: slot and close without rebuilds, rebuilds without close, the switches, delta mode. */
export const SLOT_GEN: SessionGenOptions = { ...FULL_GEN, usages: [500, 1100, 2100, 2500], rebuild: false };
export const REBUILD_GEN: SessionGenOptions = { ...FULL_GEN, usages: [500, 3100], subagent: false, settlements: ['success', 'failure:transient', 'cancelled'], close: false };
export const SWITCH_GEN: SessionGenOptions = { ...REBUILD_GEN, usages: [500, 1100, 3100], drain: false };
export const DELTA_GEN: SessionGenOptions = { ...SLOT_GEN, usages: [500, 1100, 2100], settlements: ['success', 'failure:transient', 'skipped'], close: false };
/** Fitted rebuilds that ask writers to catch up, and writers that fail in a row (the backoff). */
export const CATCHUP_GEN: SessionGenOptions = {
  ...REBUILD_GEN,
  usages: [500, 3100],
  settlements: ['success', 'failure:validation'],
  staleSettlements: false,
  manual: false,
  drain: false,
  catchUp: true,
};
export const CHECKPOINT_OFF_INPUT: SessionInput = { ...MODEL_INPUT, checkpointEnabled: false };
export const MEMORY_WRITE_OFF_INPUT: SessionInput = { ...MODEL_INPUT, memoryWriteDisabled: true };
export const DELTA_INPUT: SessionInput = { ...MODEL_INPUT, fork: false, forkUnavailableReason: 'no writing tool' };

export function settlement(writerId: string, label: SettlementLabel): SessionEvent {
  if (label === 'success') return { type: 'writer.settled', writerId, outcome: 'success' };
  if (label === 'cancelled') return { type: 'writer.settled', writerId, outcome: 'cancelled', failure: { kind: 'cancelled', retryable: false }, reason: 'cancelled' };
  if (label === 'skipped') return { type: 'writer.settled', writerId, outcome: 'skipped', reason: 'no fork prefix' };
  const kind = label.slice('failure:'.length) as Exclude<FailureKind, 'cancelled'>;
  return { type: 'writer.settled', writerId, outcome: 'failure', failure: FAILURES[kind] };
}

/** Highest number used by any message id the session knows, so new ids never collide with old ones. */
function maxNum(ctx: SessionContext): number {
  let max = 0;
  const see = (id: string | null | undefined) => {
    const m = id == null ? null : /(\d+)$/.exec(id);
    if (m) max = Math.max(max, Number(m[1]));
  };
  for (const id of indexIds(ctx.index)) see(id);
  see(ctx.watermark);
  see(ctx.writer?.boundary);
  return max;
}

export function appendEvent(ctx: SessionContext, usage: number, main = true): SessionEvent {
  const n = maxNum(ctx) + 1;
  const msg = (id: string, role: 'user' | 'assistant', usageTotal: number | null): IndexedMessage => ({
    id,
    role,
    tokens: 1,
    textual: true,
    finished: role === 'assistant',
    toolCallIds: [],
    main,
    usageTotal,
  });
  const prefix = main ? 'm' : 'x';
  return { type: 'messages.appended', messages: [msg(`${prefix}${n}`, 'user', null), msg(`${prefix}${n + 1}`, 'assistant', usage)] };
}

function boundaryEntry(ctx: SessionContext): { id: string; role: 'user'; tokens: number; textual: boolean; finished: boolean; toolCallIds: string[] } {
  return { id: `b${maxNum(ctx)}`, role: 'user', tokens: 1, textual: true, finished: false, toolCallIds: [] };
}

/** The preserved tail of a render: main-slice messages after the stored watermark. */
function tailAfterWatermark(ctx: SessionContext): string[] {
  const index = indexEntries(ctx.index);
  const i = index.findIndex((m) => m.id === ctx.watermark);
  return index.slice(i + 1).filter((m) => !m.id.startsWith('b')).map((m) => m.id);
}

function tailAfterCompaction(ctx: SessionContext): string[] {
  const index = indexEntries(ctx.index);
  const b = computeBoundaryIndex(index, ctx.input.tail);
  return index.slice(b + 1).map((m) => m.id);
}

const currentTimer = (ctx: SessionContext) => `${ctx.input.sessionId}-rebuild${ctx.rebuildSeq}-wait`;

/** The events the outside world (agent, runtime, effect results) can send in this state, each with a label. */
export function sessionEvents(snapshot: SessionSnapshot, opts: SessionGenOptions = FULL_GEN): Labelled[] {
  const ctx = snapshot.context;
  const sid = ctx.input.sessionId;
  const out: Labelled[] = [];
  const add = (label: string, event: SessionEvent) => out.push({ label, event });
  // A closed session refuses agent input (the runtime answers `conflict`); only resume and late results reach it.
  const agentInput = !ctx.closed || opts.closedInput === true;
  if (agentInput) {
    for (const u of opts.usages) add(`append:${u}`, appendEvent(ctx, u));
    if (opts.subagent) add('append:subagent', appendEvent(ctx, 2900, false));
    if (opts.manual) add('checkpoint', { type: 'checkpoint.requested', requestId: `cp${ctx.writerSeq}` });
    add('tasks', { type: 'tasks.replaced', tasks: [{ id: 'T1', status: 'open', summary: 'task' }] });
  }
  if (ctx.writer !== null) for (const s of opts.settlements) add(`settle:${s}`, settlement(ctx.writer.writerId, s));
  if (opts.staleSettlements) {
    // The writer that settled last, delivered again; an older one; an id never issued.
    if (ctx.writer === null && ctx.writerSeq > 0) add('settle:duplicate', settlement(`${sid}-w${ctx.writerSeq}`, 'success'));
    if (ctx.writerSeq > 0) add('settle:stale', settlement(`${sid}-w${ctx.writerSeq - 1}`, 'success'));
    add('settle:unknown', settlement(`${sid}-w999`, 'success'));
  }
  if (opts.rebuild) {
    const rb = ctx.rebuild;
    if (agentInput) {
      const requestId = rb === null ? `rb${ctx.rebuildSeq + 1}` : `rb${ctx.rebuildSeq}-again`;
      for (const reason of ['overflow', 'manual', 'compaction'] as const) {
        for (const exists of [true, false]) {
          add(`rebuild:${reason}:${exists ? 'file' : 'nofile'}`, {
            type: 'rebuild.requested',
            requestId,
            reason,
            waitMs: reason === 'manual' ? 300_000 : 180_000,
            inFlightWaitMs: 30_000,
            checkpointExists: exists,
          });
        }
      }
    }
    if (rb?.timerId) add('timer:current', { type: 'timer.fired', timerId: rb.timerId });
    if (ctx.rebuildSeq > 0 && rb?.timerId !== currentTimer(ctx)) add('timer:stale', { type: 'timer.fired', timerId: currentTimer(ctx) });
    if (ctx.rebuildSeq > 0) add('timer:old', { type: 'timer.fired', timerId: `${sid}-rebuild${ctx.rebuildSeq - 1}-wait` });
    if (rb?.phase === 'rendering') {
      add('rendered:ok', { type: 'rebuild.rendered', requestId: rb.requestId, ok: true, boundary: boundaryEntry(ctx), tailIds: tailAfterWatermark(ctx) });
      add('rendered:failed', { type: 'rebuild.rendered', requestId: rb.requestId, ok: false, reason: 'render failed', tailIds: [] });
      // A fitted render whose boundary no checkpoint covers yet: a writer should catch up to it.
      if (opts.catchUp === true) add('rendered:catchup', { type: 'rebuild.rendered', requestId: rb.requestId, ok: true, boundary: boundaryEntry(ctx), tailIds: tailAfterWatermark(ctx), catchUp: true });
    }
    if (rb?.phase === 'compacting') {
      add('compacted', { type: 'rebuild.compacted', requestId: rb.requestId, source: 'model', boundary: boundaryEntry(ctx), tailIds: tailAfterCompaction(ctx) });
      if (opts.catchUp === true) add('compacted:catchup', { type: 'rebuild.compacted', requestId: rb.requestId, source: 'extractive', boundary: boundaryEntry(ctx), tailIds: tailAfterCompaction(ctx), catchUp: true });
    }
    // A restart drops the rebuild in progress (its requester is gone); a late one names a finished request.
    if (rb !== null) add('abandoned', { type: 'rebuild.abandoned', requestId: rb.requestId, reason: 'daemon restarted' });
    else if (ctx.rebuildSeq > 0) add('abandoned:late', { type: 'rebuild.abandoned', requestId: `rb${ctx.rebuildSeq}`, reason: 'daemon restarted' });
    if (ctx.rebuildSeq > 0 && (rb === null || rb.phase === 'waiting')) {
      // Late or out-of-order results for the latest request.
      const requestId = `rb${ctx.rebuildSeq}`;
      add('rendered:late', { type: 'rebuild.rendered', requestId, ok: true, boundary: boundaryEntry(ctx), tailIds: [] });
      add('compacted:late', { type: 'rebuild.compacted', requestId, source: 'extractive', boundary: boundaryEntry(ctx), tailIds: [] });
    }
  }
  if (opts.drain) add('drain', { type: 'drain.requested' });
  // A restarted daemon lifts the previous process's drain when it loads the session.
  if (opts.drain && ctx.draining) add('drain:lifted', { type: 'drain.lifted' });
  if (opts.close) {
    if (agentInput) add('close', { type: 'close.requested', requestId: ctx.closeRequestId === null ? `close${ctx.writerSeq}` : `close${ctx.writerSeq}-again`, waitMs: 120_000 });
    // The close wait: fired while closing, or late (after the writer settled and the timer was cancelled).
    // One timer per close request: the current one, or a late one of an earlier close.
    add(ctx.closeRequestId !== null ? 'timer:close' : 'timer:close-late', { type: 'timer.fired', timerId: `${sid}-close-${ctx.closeRequestId ?? `close${ctx.writerSeq}`}` });
  }
  if (ctx.closed || ctx.draining) add('resume', { type: 'session.resumed' });
  return out;
}

/**
 * Context abstraction: what decisions depend on, never ids or the message index. The writers' backoff after failures
 * in a row is left out: it decides only whether a rebuild asks for a writer, which `abstractWithBackoff` (the catch-up
 * space) follows exactly; elsewhere it would multiply the states without a new decision within their paths.
 */
const abstractions = new WeakMap<object, string>();
export function abstractSession(snapshot: SessionSnapshot): string {
  let key = abstractions.get(snapshot);
  if (key === undefined) {
    key = abstract(snapshot);
    abstractions.set(snapshot, key);
  }
  return key;
}

/** `abstractSession` with the writers' backoff, exactly as far as it decides anything. */
export function abstractWithBackoff(snapshot: SessionSnapshot): string {
  const c = snapshot.context;
  // Failures in a row up to the longest period, and rebuilds since the last one up to the current period.
  const backoff = c.failedWriters === 0 ? 0 : `${Math.min(c.failedWriters, 3)}:${Math.min(c.rebuildsSinceFailure, backoffPeriod(c.failedWriters))}`;
  return `${abstractSession(snapshot)}|${backoff}|${c.catchUp !== null}`;
}

/** The abstraction a generator's space is explored with. */
export function abstractionFor(gen: SessionGenOptions): (snapshot: SessionSnapshot) => string {
  return gen.catchUp === true ? abstractWithBackoff : abstractSession;
}

function abstract(snapshot: SessionSnapshot): string {
  const c = snapshot.context;
  const final = c.input.thresholds.at(-1);
  const rb = c.rebuild;
  return JSON.stringify([
    snapshot.value,
    c.tokens,
    c.crossed,
    c.watermark !== null,
    c.writer === null ? null : [c.writer.trigger, c.writer.rung, c.writer.rung === final ? c.writer.firedAt : null],
    c.pending,
    c.recoveryGate,
    rb === null ? null : [rb.phase, rb.mode, rb.compactOutcome, rb.timerId !== null, rb.writerId !== null && rb.writerId === c.writer?.writerId],
    c.draining,
    c.closed,
    c.closeRequestId !== null,
    c.usageRecovered,
    c.index.length > 0,
    c.writerSeq > 0,
    c.rebuildSeq > 0,
    c.input.fork ? null : deltaIsEmpty(c),
  ]);
}

/** Delta mode: whether a writer would find nothing new since the watermark (a decision input the index hides). */
function deltaIsEmpty(c: SessionContext): boolean {
  const index = indexEntries(c.index);
  const b = computeBoundaryIndex(index, c.input.tail);
  const start = deltaStartIndex(index, c.watermark);
  const w = c.watermark === null ? -1 : index.findIndex((m) => m.id === c.watermark);
  return start > b || (w >= b && w >= 0);
}

/**
 * Nonsense the runtime can still deliver in any state: settlements, timers and rebuild results with stale or unknown ids,
 * results in the wrong phase, an empty append, usage that goes down. `pick` chooses one.
 */
export function sessionNoise(s: SessionSnapshot, pick: number): SessionEvent {
  const c = s.context;
  const sid = c.input.sessionId;
  const ids = [`${sid}-w${pick % 4}`, 'w-unknown', `${sid}-w${c.writerSeq + 1}`];
  const writerId = ids[pick % ids.length] as string;
  const label = ALL_SETTLEMENTS[pick % ALL_SETTLEMENTS.length] ?? 'success';
  const requestId = [`rb${pick % 3}`, `rb${c.rebuildSeq}`, 'rb-unknown'][pick % 3] as string;
  const boundary = { id: `b-noise${pick}`, role: 'user' as const, tokens: 1, textual: true, finished: false, toolCallIds: [] };
  const noise: SessionEvent[] = [
    settlement(writerId, label),
    { type: 'timer.fired', timerId: [`${sid}-rebuild${pick % 3}-wait`, `${sid}-close`, 'timer-unknown'][pick % 3] as string },
    { type: 'rebuild.rendered', requestId, ok: pick % 2 === 0, boundary, tailIds: [] },
    { type: 'rebuild.compacted', requestId, source: 'extractive', boundary, tailIds: [] },
    { type: 'tasks.replaced', tasks: [{ id: 'T1', status: 'open', summary: 'task' }] },
    { type: 'messages.appended', messages: [] },
  ];
  if (!c.closed) noise.push(appendEvent(c, [0, 700, 1500, 2400, 2600, 5000][pick % 6] as number, pick % 5 !== 0));
  return noise[pick % noise.length] as SessionEvent;
}

// ---------------------------------------------------------------------------------------------------------------
// Checks

/** Invariants of one reachable state. */
export function checkSessionState(snapshot: SessionSnapshot, check: Checks): void {
  const c = snapshot.context;
  const value = snapshot.value;
  check.that(value.slot === slotOf(c), `slot region ${value.slot} disagrees with the context (${slotOf(c)})`);
  const rebuild = c.rebuild?.phase ?? 'idle';
  check.that(value.rebuild === rebuild, `rebuild region ${value.rebuild} disagrees with the context (${rebuild})`);
  const lifecycle = c.closed ? 'closed' : c.closeRequestId !== null ? 'closing' : 'active';
  check.that(value.lifecycle === lifecycle, `lifecycle region ${value.lifecycle} disagrees with the context (${lifecycle})`);
  check.that(c.pending === null || c.writer !== null, 'a pending request without a running writer');
  check.that(!c.draining || c.pending === null, 'a pending request survives a drain');
  check.that(c.closeRequestId === null || c.writer !== null, 'closing without a writer to wait for');
  check.that(!c.closed || c.closeRequestId === null, 'closed and closing at once');
  check.that(c.writer === null || c.writer.writerId === `${c.input.sessionId}-w${c.writerSeq}`, 'the running writer is not the newest one issued');
  check.that(new Set(c.crossed).size === c.crossed.length && c.crossed.every((t) => c.input.thresholds.includes(t)), 'crossed rungs are not a set of rungs');
  check.that(c.recoveryGate === null || c.recoveryGate <= c.input.maxAllowed, 'the recovery gate exceeds maxAllowed');
  const rb = c.rebuild;
  if (rb !== null) {
    if (rb.phase === 'waiting') {
      check.that(rb.timerId !== null, 'a waiting rebuild without a timer');
      check.that(c.writer !== null && rb.writerId === c.writer.writerId, 'a waiting rebuild is not waiting for the running writer');
    } else {
      check.that(rb.timerId === null, 'a timer is kept after the wait ended');
    }
    if (rb.phase === 'rendering') check.that(c.watermark !== null, 'rendering without a watermark');
  }
}

export type { WriterOutcome };
