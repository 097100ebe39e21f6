import type { SessionTimeline, TimelineEntry } from '@baton/runtime';

/** One rebuild of a session: when it was asked for, how it ended and where the timeline marks it. */
export interface RebuildMark {
  /** 1, 2, … in the order they were asked for. */
  readonly number: number;
  readonly requestId: string;
  readonly reason: string;
  readonly requestedSeq: number;
  readonly requestedAt: number;
  /** `rendered` (from the checkpoint), `compacted` (a summary), `failed`, `abandoned`, or `pending`. */
  readonly outcome: 'rendered' | 'compacted' | 'failed' | 'abandoned' | 'pending';
  /** Seq of the record that ended it (the request's own seq while pending): where the marker is drawn. */
  readonly seq: number;
  readonly at: number;
  /** A summary's source, for a compaction. */
  readonly source: string | null;
  /** Tokens of the boundary message Baton inserted, when recorded. */
  readonly tokens: number | null;
  readonly detail: string | null;
  /** The rebuilt context can be shown (a rendered or compacted rebuild). */
  readonly hasContext: boolean;
  /**
   * How the rebuilt request was fitted into the usable window, when it was: the provider tokens it came to against the
   * usable window, and the measures taken in order (`cut 12 messages`, `clear 3`, …); null for a rebuild recorded
   * before fitting, or one that was not rendered.
   */
  readonly fit: { readonly total: number; readonly limit: number; readonly fits: boolean; readonly steps: readonly string[] } | null;
}

/** A fit report as the inspector shows it. */
function fitOf(fit: { tokens: { total: number }; limit: number; fits: boolean; steps: readonly { step: string; messages: number }[] } | undefined): RebuildMark['fit'] {
  if (fit === undefined) return null;
  return { total: fit.tokens.total, limit: fit.limit, fits: fit.fits, steps: fit.steps.map((s) => (s.messages > 0 ? `${s.step} ${s.messages}` : s.step)) };
}

type SessionEntry = Extract<TimelineEntry, { writerId: null }>;

/** Every rebuild the session asked for, in order, with its end. */
export function rebuildMarks(timeline: SessionTimeline): RebuildMark[] {
  const marks: RebuildMark[] = [];
  const byRequest = new Map<string, number>();
  for (const r of timeline.entries) {
    if (r.writerId !== null) continue;
    const e: SessionEntry = r;
    if (e.type === 'rebuild.requested') {
      byRequest.set(e.payload.requestId, marks.length);
      marks.push({
        number: marks.length + 1,
        requestId: e.payload.requestId,
        reason: e.payload.reason,
        requestedSeq: e.seq,
        requestedAt: e.at,
        outcome: 'pending',
        seq: e.seq,
        at: e.at,
        source: null,
        tokens: null,
        detail: null,
        hasContext: false,
        fit: null,
      });
      continue;
    }
    if (e.type !== 'rebuild.rendered' && e.type !== 'rebuild.compacted' && e.type !== 'rebuild.abandoned') continue;
    const index = byRequest.get(e.payload.requestId);
    const mark = index === undefined ? undefined : marks[index];
    if (index === undefined || mark === undefined) continue;
    const end = { seq: e.seq, at: e.at };
    if (e.type === 'rebuild.abandoned') {
      marks[index] = { ...mark, ...end, outcome: 'abandoned', detail: e.payload.reason };
    } else if (e.type === 'rebuild.compacted') {
      marks[index] = { ...mark, ...end, outcome: 'compacted', source: e.payload.source, tokens: e.payload.tokens ?? null, hasContext: true, fit: fitOf(e.payload.fit) };
    } else if (e.payload.ok) {
      marks[index] = { ...mark, ...end, outcome: 'rendered', tokens: e.payload.tokens ?? null, hasContext: true, fit: fitOf(e.payload.fit) };
    } else {
      marks[index] = { ...mark, ...end, outcome: 'failed', detail: e.payload.reason ?? null };
    }
  }
  return marks;
}
