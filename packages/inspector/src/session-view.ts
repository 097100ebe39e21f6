import { sessionStream, sessionWritersPrefix, type EventLog } from '@baton/log-schema';
import type { Lineage, Successor } from '@baton/protocol';
import { lineageOf, readTimeline, successorsOf, type SessionTimeline } from '@baton/runtime';
import { rebuildMarks, type RebuildMark } from './rebuild-marks.ts';
import { writerRuns, type WriterRunView } from './writer-runs.ts';

/** Everything the session page draws. */
export interface SessionView {
  readonly sessionId: string;
  readonly projectId: string;
  readonly model: string;
  readonly api: string;
  readonly openedAt: number;
  readonly usableWindow: number;
  /** The threshold rungs, in tokens. */
  readonly thresholds: readonly number[];
  readonly fork: boolean;
  /** Seq of the last session record (the timeline's x range ends there). */
  readonly lastSeq: number;
  readonly records: number;
  /**
   * Token usage over the conversation: after the input at `seq[i]` (a session-stream seq, at time `at[i]`), the session
   * counted `tokens[i]`, as its recorded decisions say.
   */
  readonly usage: { readonly seq: readonly number[]; readonly at: readonly number[]; readonly tokens: readonly number[] };
  readonly writers: readonly WriterRunView[];
  readonly rebuilds: readonly RebuildMark[];
  readonly closed: boolean;
  /** Changes whenever a record is appended to the session or one of its writers (what the page polls). */
  readonly revision: number;
  /** The session it continues (absent: none). */
  readonly lineage?: Lineage;
  /** The sessions that continue it (absent: none). */
  readonly successors?: readonly Successor[];
}

/** A number that grows with every record of the session stream and of its writer streams, read without decoding. */
export function sessionRevision(log: EventLog, sessionId: string): number {
  let revision = log.lastSeq(sessionStream(sessionId));
  for (const stream of log.streams(sessionWritersPrefix(sessionId))) revision += log.lastSeq(stream);
  return revision;
}

/** The session page's data from a timeline read with `readTimeline`. */
export function sessionViewOf(timeline: SessionTimeline, revision: number): SessionView {
  const seq: number[] = [];
  const at: number[] = [];
  const tokens: number[] = [];
  let closed = false;
  let lastSeq = 1;
  let records = 0;
  const times = new Map<number, number>();
  for (const e of timeline.entries) {
    if (e.writerId !== null) continue;
    records++;
    lastSeq = e.seq;
    times.set(e.seq, e.at);
    if (e.type !== 'decision') continue;
    // Decisions follow their input; a later decision for the same input (none today) would replace the point.
    if (seq.at(-1) === e.payload.for) {
      tokens[tokens.length - 1] = e.payload.state.tokens;
    } else {
      seq.push(e.payload.for);
      at.push(times.get(e.payload.for) ?? e.at);
      tokens.push(e.payload.state.tokens);
    }
    closed = e.payload.state.closed;
  }
  const input = timeline.setup.input;
  return {
    sessionId: timeline.sessionId,
    projectId: timeline.setup.projectId,
    model: timeline.setup.model,
    api: timeline.setup.api ?? 'openai-chat',
    openedAt: timeline.openedAt,
    usableWindow: input.usableWindow,
    thresholds: input.thresholds,
    fork: input.fork,
    lastSeq,
    records,
    usage: { seq, at, tokens },
    writers: writerRuns(timeline),
    rebuilds: rebuildMarks(timeline),
    closed,
    revision,
  };
}

/**
 * Reads a session's page data from the log (its stream and its writers', every record checked against its schema).
 *
 * @throws ReplayError `not_found` for an unknown session, `malformed` for a record that fails its schema.
 */
export function sessionView(log: EventLog, sessionId: string): SessionView {
  const revision = sessionRevision(log, sessionId);
  const view = sessionViewOf(readTimeline(log, sessionId), revision);
  const from = lineageOf(log, sessionId);
  const successors = successorsOf(log, sessionId);
  if (from === undefined && successors.length === 0) return view;
  return { ...view, ...(from !== undefined ? { lineage: from } : {}), ...(successors.length > 0 ? { successors } : {}) };
}
