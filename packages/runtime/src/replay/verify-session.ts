import type { SessionEffect, WriterStartEffect } from '@baton/actors';
import {
  LogRecordError,
  SESSION_RECORDS,
  checkRecord,
  writerStream,
  type EventLog,
  type StoredRecord,
  type StoredSessionRecord,
} from '@baton/log-schema';
import { HostedSession, sessionEventOf } from '../host/session-host.ts';
import type { SessionSummary } from '../host/worker-messages.ts';
import type { Divergence } from './divergence.ts';
import { firstDifference } from './plain-diff.ts';
import { refoldWriter, type WriterRefold } from './refold-writer.ts';
import { readSessionRecords, sessionWriterIds, type SessionRecords } from './session-records.ts';

/** Outcome of `verifySession`: counts of what was checked, and the first divergence (null when there is none). */
export interface VerifyResult {
  readonly sessionId: string;
  /** Input records of the session stream folded through `sessionMachine`. */
  readonly sessionEvents: number;
  /** `decision` records compared with the recomputed decision. */
  readonly decisions: number;
  /** `snapshot` records compared with the re-folded state (and the newest one loaded and folded to the end). */
  readonly snapshots: number;
  /** Writer streams re-folded and checked against the session's settlements. */
  readonly writers: number;
  readonly divergence: Divergence | null;
}

/** What the replay derived for one session input: the decision the daemon should have recorded for it. */
interface Derived {
  readonly state: SessionSummary;
  readonly effects: readonly SessionEffect[];
}

interface SessionReplay {
  readonly events: number;
  readonly decisions: number;
  readonly snapshots: number;
  readonly divergence: Divergence | null;
  readonly starts: Map<string, WriterStartEffect>;
  /** First `writer.settled` record per writer id. */
  readonly settlements: Map<string, StoredRecord>;
  /** Writer holding the slot after the last input. */
  readonly runningWriter: string | null;
}

/**
 * Determinism check of one session. Re-folds the session stream from `session.opened` through the same host
 * the daemon uses (the session machine and what its host keeps) and compares every `decision` record with the
 * recomputed `{ state, effects }`; a missing decision is not a divergence (decisions are derived and appended without
 * waiting). Every `snapshot` record must equal the re-folded state at that point, and loading from the newest one and
 * folding the inputs after it must reach the full re-fold's final state. A record that cannot be folded is the
 * divergence.
 * Then re-folds every writer stream through `writerMachine` and checks its settle effect against the session's
 * `writer.settled` record for that writer (a writer stream that never settled is consistent only with a `cancelled`
 * or `failure{internal}` settlement, or with a writer the session still considers running). Stops at the first
 * divergence.
 *
 * Throws `ReplayError('not_found')` for an unknown session and `ReplayError('malformed')` for an unusable
 * `session.opened`.
 */
export function verifySession(log: EventLog, sessionId: string): VerifyResult {
  const session = readSessionRecords(log, sessionId);
  const replay = replaySession(session);
  const base = { sessionId, sessionEvents: replay.events, decisions: replay.decisions, snapshots: replay.snapshots };
  if (replay.divergence !== null) return { ...base, writers: 0, divergence: replay.divergence };
  const ids = [...new Set([...replay.starts.keys(), ...sessionWriterIds(log, session)])];
  let writers = 0;
  for (const id of ids) {
    const stream = writerStream(id);
    const refold = refoldWriter(id, stream, [...log.read(stream)]);
    const divergence = refold.divergence ?? checkWriter(session, replay, refold);
    if (divergence !== null) return { ...base, writers, divergence };
    writers++;
  }
  return { ...base, writers, divergence: null };
}

function replaySession(session: SessionRecords): SessionReplay {
  // The same host the daemon folds with (machine and host state), without its effects.
  const hosted = new HostedSession(session.setup);
  const derived = new Map<number, Derived>();
  const starts = new Map<string, WriterStartEffect>();
  const settlements = new Map<string, StoredRecord>();
  let events = 0;
  let decisions = 0;
  let snapshots = 0;
  /** The newest snapshot seen, and what the full re-fold reached by then (checked again at the end). */
  let newest: { readonly record: Extract<StoredSessionRecord, { type: 'snapshot' }>; readonly tail: StoredSessionRecord[] } | null = null;
  const result = (divergence: Divergence | null): SessionReplay => ({
    events,
    decisions,
    snapshots,
    divergence,
    starts,
    settlements,
    runningWriter: hosted.context.writer?.writerId ?? null,
  });
  const diverge = (record: StoredRecord, reason: string, expected: unknown, actual: unknown): SessionReplay =>
    result({ stream: session.stream, seq: record.seq, reason, path: firstDifference(expected, actual), expected, actual });

  for (const raw of session.records.slice(1)) {
    let record: StoredSessionRecord;
    try {
      record = checkRecord(SESSION_RECORDS, raw);
    } catch (err) {
      if (!(err instanceof LogRecordError)) throw err;
      return diverge(raw, `record ${raw.type} does not match its schema: ${err.issues.slice(0, 3).join('; ')}`, 'a valid session record', raw.payload);
    }
    if (record.type === 'decision') {
      const payload = record.payload;
      const actual = { state: payload.state, effects: payload.effects };
      const expected = derived.get(payload.for);
      if (expected === undefined) {
        return diverge(record, `decision for seq ${payload.for}, which is not an input recorded before it`, null, payload);
      }
      // A state field the recording does not have (added to the summary, or a region added to the chart, by a later
      // version) is not a divergence: an older log is compared on what it recorded.
      const comparable = { state: onRecordedKeys(expected.state, actual.state), effects: expected.effects };
      if (firstDifference(comparable, actual) !== null) {
        return diverge(record, `decision for seq ${payload.for} differs from the replayed one`, comparable, actual);
      }
      decisions++;
      continue;
    }
    if (record.type === 'snapshot') {
      // A snapshot must be exactly the state the full re-fold has reached at that point.
      const expected = hosted.toSnapshot();
      if (firstDifference(expected, record.payload) !== null) {
        return diverge(record, 'the snapshot differs from the state re-folded from the start', expected, record.payload);
      }
      snapshots++;
      newest = { record, tail: [] };
      continue;
    }
    let step: ReturnType<HostedSession['fold']>;
    try {
      step = hosted.fold(record);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return diverge(record, `record ${record.type} cannot be folded: ${message.split('\n')[0] ?? ''}`, 'a record the session can fold', record.payload);
    }
    if (sessionEventOf(record) === null) continue;
    newest?.tail.push(record);
    events++;
    derived.set(record.seq, { state: step.summary, effects: step.effects });
    for (const effect of step.effects) if (effect.kind === 'writer.start') starts.set(effect.writerId, effect);
    if (record.type === 'writer.settled' && !settlements.has(record.payload.writerId)) settlements.set(record.payload.writerId, record);
  }
  if (newest !== null) {
    // Loading starts from the newest snapshot: that state plus the inputs after it must equal the full re-fold.
    const loaded = new HostedSession(session.setup, newest.record.payload);
    for (const record of newest.tail) loaded.fold(record);
    const expected = hosted.toSnapshot();
    const actual = loaded.toSnapshot();
    if (firstDifference(expected, actual) !== null) {
      return diverge(newest.record, 'loading from this snapshot and the inputs after it does not reach the full re-fold', expected, actual);
    }
  }
  return result(null);
}

/** `expected` reduced to the keys `recorded` has, at every depth of nested objects (arrays are kept whole). */
function onRecordedKeys(expected: unknown, recorded: unknown): unknown {
  if (!isPlainObject(expected) || !isPlainObject(recorded)) return expected;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) if (Object.hasOwn(recorded, key)) out[key] = onRecordedKeys(expected[key], recorded[key]);
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ outcome, failure?, reason? }` with null and absent treated alike. */
function settlementOf(value: { outcome?: unknown; failure?: unknown; reason?: unknown }): Record<string, unknown> {
  return {
    outcome: value.outcome,
    ...(value.failure != null ? { failure: value.failure } : {}),
    ...(value.reason != null ? { reason: value.reason } : {}),
  };
}

function checkWriter(session: SessionRecords, replay: SessionReplay, refold: WriterRefold): Divergence | null {
  const { writerId, stream } = refold;
  const start = replay.starts.get(writerId);
  const settlement = replay.settlements.get(writerId);
  const running = replay.runningWriter === writerId;
  const at = (s: string, seq: number, reason: string, expected: unknown, actual: unknown): Divergence => ({
    stream: s,
    seq,
    reason,
    path: firstDifference(expected, actual),
    expected,
    actual,
  });
  if (start === undefined) {
    return at(stream, 1, `writer ${writerId} has a stream but the replayed session never started it`, null, refold.input);
  }
  if (refold.input !== null) {
    const expected = { writerId: start.writerId, sessionId: session.sessionId, mode: start.mode, boundary: start.boundary };
    const { writerId: w, sessionId: s, mode, boundary } = refold.input;
    const actual = { writerId: w, sessionId: s, mode, boundary };
    if (firstDifference(expected, actual) !== null) {
      return at(stream, 1, `writer ${writerId} started with another input than the session's writer.start effect`, expected, actual);
    }
  }
  if (refold.settle !== null) {
    const expected = settlementOf(refold.settle.effect);
    if (settlement === undefined) {
      if (running) return null; // settled in its stream; the session had not recorded it yet when the log ended
      return at(stream, refold.settle.seq, `writer ${writerId} settled but the session recorded no writer.settled for it`, expected, null);
    }
    const actual = settlementOf(settlement.payload as Record<string, unknown>);
    if (firstDifference(expected, actual) !== null) {
      return at(session.stream, settlement.seq, `writer.settled of ${writerId} differs from the settlement replayed from ${stream}`, expected, actual);
    }
    return null;
  }
  if (settlement === undefined) {
    if (running) return null; // still running when the log ended
    return at(session.stream, session.records.at(-1)?.seq ?? 1, `writer ${writerId} never settled and the session recorded no settlement for it`, { outcome: 'cancelled' }, null);
  }
  const actual = settlementOf(settlement.payload as Record<string, unknown>);
  // A writer whose stream stops before it settled was cancelled (the daemon restarted) or its executor failed (an
  // internal failure, settled by its host): nothing else can end a writer without a settle record.
  const internal = actual['outcome'] === 'failure' && (actual['failure'] as { kind?: unknown } | undefined)?.kind === 'internal';
  if (actual['outcome'] !== 'cancelled' && !internal) {
    return at(session.stream, settlement.seq, `writer ${writerId} never settled in ${stream}, so only a cancelled or internal-failure settlement is consistent`, { outcome: 'cancelled' }, actual);
  }
  return null;
}
