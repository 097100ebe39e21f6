/**
 * Small drivers that fold events through the real machines (`foldStart` / `foldEvent`) and keep the effects, for the
 * numbered acceptance scenarios.
 */
import type { SnapshotFrom } from 'xstate';
import { foldEvent, foldStart } from '../../src/fold.ts';
import { indexEntries } from '../../src/index-list.ts';
import type { SessionContext } from '../../src/session-context.ts';
import type { WriterOutcome } from '@baton/protocol';
import type { SessionPublication, SessionEffect, WriterStartEffect } from '../../src/session-effects.ts';
import {
  SessionEventSchema,
  type Failure,
  type IndexedMessage,
  type SessionEvent,
  type SessionInput,
} from '../../src/session-events.ts';
import { sessionMachine } from '../../src/session-machine.ts';
import type { WriterEffect } from '../../src/writer-effects.ts';
import { WriterEventSchema, type WriterEvent, type WriterInput } from '../../src/writer-events.ts';
import { writerMachine } from '../../src/writer-machine.ts';
import type { WriterContext } from '../../src/writer-context.ts';

export const BASE_INPUT: SessionInput = {
  sessionId: 's1',
  projectId: 'p1',
  usableWindow: 100_000,
  thresholds: [20_000, 40_000, 60_000, 80_000],
  maxAllowed: 87_000,
  checkpointEnabled: true,
  memoryWriteDisabled: false,
  fork: true,
  forkUnavailableReason: null,
  // Small tail: the boundary is the message before the last finished assistant (one text message is enough).
  tail: { minTokens: 10, maxTokens: 20, minTextMessages: 1 },
};

type Reply = Extract<SessionEffect, { kind: 'reply' }>;
type RebuildReply = Extract<SessionEffect, { kind: 'rebuild.reply' }>;

export class SessionDriver {
  snapshot: SnapshotFrom<typeof sessionMachine>;
  /** Effects of each folded event, in order. */
  readonly log: { event: SessionEvent; effects: SessionEffect[] }[] = [];
  private n = 0;

  constructor(readonly input: SessionInput = BASE_INPUT) {
    this.snapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
  }

  get ctx(): SessionContext {
    return this.snapshot.context;
  }

  get value(): { slot: string; rebuild: string; lifecycle: string } {
    return this.snapshot.value;
  }

  /** Folds one event (validated against the log schema) and returns its effects. */
  fold(event: SessionEvent): SessionEffect[] {
    SessionEventSchema.parse(event);
    const step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, this.snapshot, event);
    this.snapshot = step.snapshot;
    this.log.push({ event, effects: step.effects });
    return step.effects;
  }

  /** Next message id (`m1`, `m2`, …, or with another prefix). */
  id(prefix = 'm'): string {
    this.n++;
    return `${prefix}${this.n}`;
  }

  user(opts: Partial<IndexedMessage> = {}): IndexedMessage {
    return { id: this.id(), role: 'user', tokens: 10, textual: true, finished: false, toolCallIds: [], main: true, usageTotal: null, ...opts };
  }

  assistant(usageTotal: number | null, opts: Partial<IndexedMessage> = {}): IndexedMessage {
    return { id: this.id(), role: 'assistant', tokens: 10, textual: true, finished: true, toolCallIds: [], main: true, usageTotal, ...opts };
  }

  tool(callId: string, opts: Partial<IndexedMessage> = {}): IndexedMessage {
    return { id: this.id(), role: 'tool', tokens: 10, textual: false, finished: false, toolCallIds: [callId], main: true, usageTotal: null, ...opts };
  }

  append(...messages: IndexedMessage[]): SessionEffect[] {
    return this.fold({ type: 'messages.appended', messages });
  }

  /** One user turn answered by a finished assistant reporting `usage` total tokens. */
  turn(usage: number, main = true): SessionEffect[] {
    return this.append(this.user({ main }), this.assistant(usage, { main }));
  }

  checkpoint(requestId = `cp${this.log.length}`): { result: string; reason?: string; effects: SessionEffect[] } {
    const effects = this.fold({ type: 'checkpoint.requested', requestId });
    const reply = effects.find((e): e is Reply => e.kind === 'reply' && e.requestId === requestId);
    if (reply === undefined) throw new Error('checkpoint request not answered');
    return { ...(reply.body as { result: string; reason?: string }), effects };
  }

  /** Settles the running writer (or `writerId`). */
  settle(outcome: WriterOutcome, failure?: Failure, writerId?: string): SessionEffect[] {
    const id = writerId ?? this.ctx.writer?.writerId;
    if (id === undefined) throw new Error('no running writer');
    return this.fold({ type: 'writer.settled', writerId: id, outcome, ...(failure !== undefined ? { failure } : {}) });
  }

  rebuild(opts: { reason?: 'overflow' | 'manual'; checkpointExists?: boolean; waitMs?: number; requestId?: string } = {}): SessionEffect[] {
    const reason = opts.reason ?? 'overflow';
    return this.fold({
      type: 'rebuild.requested',
      requestId: opts.requestId ?? `rb${this.log.length}`,
      reason,
      waitMs: opts.waitMs ?? (reason === 'overflow' ? 180_000 : 300_000),
      inFlightWaitMs: 30_000,
      checkpointExists: opts.checkpointExists ?? true,
    });
  }

  /** The runtime's render result for the rebuild in progress: the new boundary message and the ids kept after it. */
  rendered(ok: boolean, tailIds?: string[]): SessionEffect[] {
    const rb = this.ctx.rebuild;
    if (rb === null) throw new Error('no rebuild in progress');
    const index = indexEntries(this.ctx.index);
    const w = index.findIndex((m) => m.id === this.ctx.watermark);
    const tail = tailIds ?? index.slice(w + 1).map((m) => m.id);
    const event: SessionEvent = ok
      ? { type: 'rebuild.rendered', requestId: rb.requestId, ok, boundary: this.marker('marker'), tailIds: tail }
      : { type: 'rebuild.rendered', requestId: rb.requestId, ok, reason: 'nothing to render', tailIds: [] };
    return this.fold(event);
  }

  compacted(tailIds: string[] = []): SessionEffect[] {
    const rb = this.ctx.rebuild;
    if (rb === null) throw new Error('no rebuild in progress');
    return this.fold({ type: 'rebuild.compacted', requestId: rb.requestId, source: 'model', boundary: this.marker('summary'), tailIds });
  }

  /** The boundary message Baton inserts (a user message carrying the rebuilt context). */
  marker(prefix: string): { id: string; role: 'user'; tokens: number; textual: boolean; finished: boolean; toolCallIds: string[] } {
    return { id: this.id(prefix), role: 'user', tokens: 50, textual: true, finished: false, toolCallIds: [] };
  }

  fire(timerId: string): SessionEffect[] {
    return this.fold({ type: 'timer.fired', timerId });
  }

  /** All effects folded so far. */
  get effects(): SessionEffect[] {
    return this.log.flatMap((l) => l.effects);
  }
}

export const starts = (effects: readonly SessionEffect[]): WriterStartEffect[] => effects.filter((e): e is WriterStartEffect => e.kind === 'writer.start');
export const published = <T extends SessionPublication['type']>(effects: readonly SessionEffect[], type: T): Extract<SessionPublication, { type: T }>[] =>
  effects.flatMap((e) => (e.kind === 'publish' && e.event.type === type ? [e.event as Extract<SessionPublication, { type: T }>] : []));
export const statuses = (effects: readonly SessionEffect[]): string[] => published(effects, 'status').map((e) => e.text);
export const rebuildReplies = (effects: readonly SessionEffect[]): RebuildReply[] => effects.filter((e): e is RebuildReply => e.kind === 'rebuild.reply');
export const timerStarts = (effects: readonly SessionEffect[]) => effects.filter((e): e is Extract<SessionEffect, { kind: 'timer.start' }> => e.kind === 'timer.start');
export const kinds = (effects: readonly SessionEffect[]): string[] => effects.map((e) => (e.kind === 'publish' ? `publish:${e.event.type}` : e.kind));

export const TRANSIENT: Failure = { kind: 'transient', retryable: true, message: '429 Too Many Requests' };
export const FAILURES: Record<'transient' | 'overflow' | 'auth' | 'validation' | 'other', Failure> = {
  transient: TRANSIENT,
  overflow: { kind: 'overflow', retryable: false },
  auth: { kind: 'auth', retryable: false },
  validation: { kind: 'validation', retryable: false },
  other: { kind: 'other', retryable: false },
};
export const CANCELLED: Failure = { kind: 'cancelled', retryable: false };

// ---------------------------------------------------------------------------------------------------------------

export const WRITER_INPUT: WriterInput = { writerId: 's1-w1', sessionId: 's1', mode: 'fork', boundary: 'm3', maxReentries: 3, maxContinuations: 2 };

export class WriterDriver {
  snapshot: SnapshotFrom<typeof writerMachine>;
  readonly effects: WriterEffect[];

  constructor(input: WriterInput = WRITER_INPUT) {
    const start = foldStart<typeof writerMachine, WriterEffect>(writerMachine, input);
    this.snapshot = start.snapshot;
    this.effects = [...start.effects];
  }

  get ctx(): WriterContext {
    return this.snapshot.context;
  }

  fold(...events: WriterEvent[]): WriterEffect[] {
    const out: WriterEffect[] = [];
    for (const event of events) {
      WriterEventSchema.parse(event);
      const step = foldEvent<typeof writerMachine, WriterEffect>(writerMachine, this.snapshot, event);
      this.snapshot = step.snapshot;
      out.push(...step.effects);
    }
    this.effects.push(...out);
    return out;
  }

  settles() {
    return this.effects.filter((e): e is Extract<WriterEffect, { kind: 'settle' }> => e.kind === 'settle');
  }

  calls() {
    return this.effects.filter((e): e is Extract<WriterEffect, { kind: 'model.call' }> => e.kind === 'model.call');
  }
}

export const usage = { prompt: 1_000, completion: 20, cached: 900 };
export const reply = (content: string | null, opts: { reasoning?: string; tools?: string[]; usage?: typeof usage } = {}): WriterEvent => ({
  type: 'model.replied',
  content,
  reasoning: opts.reasoning ?? null,
  toolCalls: (opts.tools ?? []).map((name, i) => ({ id: `call${i}`, name, arguments: '{}' })),
  finishReason: (opts.tools ?? []).length > 0 ? 'tool_calls' : 'stop',
  usage: opts.usage ?? usage,
});
export const verdict = (v: { errors?: string[]; extract?: string[]; warnings?: string[] } = {}): WriterEvent => ({
  type: 'validation.completed',
  errors: v.errors ?? [],
  extract: v.extract ?? [],
  warnings: v.warnings ?? [],
});
export const PREPARED: WriterEvent = { type: 'writer.prepared' };
export const TOOLS_DONE: WriterEvent = { type: 'tools.completed', results: [{ id: 'call0', name: 'edit', ok: true, output: 'ok' }] };
export const COMMITTED: WriterEvent = { type: 'commit.completed', files: [{ path: 'checkpoint.md', hash: 'h' }] };
