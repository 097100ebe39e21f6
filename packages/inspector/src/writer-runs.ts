import type { SessionTimeline, TimelineEntry } from '@baton/runtime';

/** One writer run as the timeline draws it. */
export interface WriterRunView {
  readonly writerId: string;
  /** `w<n>` for the session's own writers, else the id. */
  readonly label: string;
  readonly trigger: string | null;
  readonly mode: string | null;
  /** The last message the run covers (its frozen boundary). */
  readonly coversUpTo: string | null;
  readonly watermark: string | null;
  readonly model: string | null;
  /** Session-stream seq where it starts (the input whose decision started it) and ends (its settlement). */
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly startedAt: number | null;
  readonly settledAt: number | null;
  /** How it settled; `running` while it has not. */
  readonly outcome: string;
  readonly failure: { readonly kind: string; readonly message: string | null } | null;
  readonly reason: string | null;
  /** Model calls the run made (replies and failed calls). */
  readonly llmCalls: number;
  readonly promptTokens: number;
  readonly cachedTokens: number;
  /** Share of the prompt tokens the provider served from its cache; null without a reply. */
  readonly cacheHitRate: number | null;
  readonly committedFiles: readonly string[];
}

type SessionEntry = Extract<TimelineEntry, { writerId: null }>;
type WriterEntry = Exclude<TimelineEntry, { writerId: null }>;

function label(writerId: string, sessionId: string): string {
  return writerId.startsWith(`${sessionId}-`) ? writerId.slice(sessionId.length + 1) : writerId;
}

/** The session-stream seq of the input whose decision started `writerId`, if a decision says so. */
function startSeq(session: readonly SessionEntry[], writerId: string): number | null {
  for (const r of session) {
    if (r.type === 'decision' && r.payload.effects.some((e) => e.kind === 'writer.start' && e.writerId === writerId)) return r.payload.for;
  }
  return null;
}

/** The seq of the last session record at or before `at` (where a run without a recorded decision is placed). */
function seqAt(session: readonly SessionEntry[], at: number): number {
  let seq = 1;
  for (const r of session) if (r.at <= at) seq = r.seq;
  return seq;
}

/** Every writer run of a session, in writer order, with what its own stream and its settlement record say. */
export function writerRuns(timeline: SessionTimeline): WriterRunView[] {
  const session = timeline.entries.filter((e): e is SessionEntry => e.writerId === null);
  const lastSeq = session.at(-1)?.seq ?? 1;
  return timeline.writerIds.map((writerId) => {
    const records = timeline.entries.filter((e): e is WriterEntry => e.writerId === writerId);
    const started = records.find((r) => r.type === 'writer.started');
    const settled = session.find((r) => r.type === 'writer.settled' && r.payload.writerId === writerId);
    let llmCalls = 0;
    let promptTokens = 0;
    let cachedTokens = 0;
    let replies = 0;
    const committed: string[] = [];
    for (const r of records) {
      if (r.type === 'model.replied') {
        llmCalls++;
        replies++;
        promptTokens += r.payload.usage.prompt;
        cachedTokens += r.payload.usage.cached;
      } else if (r.type === 'model.failed') {
        llmCalls++;
      } else if (r.type === 'commit.completed') {
        committed.push(...r.payload.files.map((f) => f.path));
      }
    }
    const fromSeq = startSeq(session, writerId) ?? seqAt(session, started?.at ?? records[0]?.at ?? 0);
    const s = settled?.type === 'writer.settled' ? settled.payload : null;
    return {
      writerId,
      label: label(writerId, timeline.sessionId),
      trigger: started?.type === 'writer.started' ? started.payload.trigger : null,
      mode: started?.type === 'writer.started' ? started.payload.input.mode : null,
      coversUpTo: started?.type === 'writer.started' ? started.payload.input.boundary : null,
      watermark: started?.type === 'writer.started' ? started.payload.watermark : null,
      model: started?.type === 'writer.started' ? started.payload.model : null,
      fromSeq,
      toSeq: settled?.seq ?? lastSeq,
      startedAt: started?.at ?? null,
      settledAt: settled?.at ?? null,
      outcome: s?.outcome ?? 'running',
      failure: s?.failure !== undefined && s.failure !== null ? { kind: s.failure.kind, message: s.failure.message ?? null } : null,
      reason: s?.reason ?? null,
      llmCalls,
      promptTokens,
      cachedTokens,
      cacheHitRate: replies > 0 && promptTokens > 0 ? cachedTokens / promptTokens : null,
      committedFiles: committed,
    };
  });
}
