import {
  SessionEventSchema,
  foldEvent,
  foldStart,
  isOverflow,
  nextThreshold,
  sessionMachine,
  slotOf,
  type SessionContext,
  type SessionEffect,
  type SessionEvent,
  type WriterStartEffect,
} from '@baton/actors';
import type { SessionSetup, StoredSessionRecord } from '@baton/log-schema';
import type { Message } from '@baton/protocol';
import type { SnapshotFrom } from 'xstate';
import { resolveToolMap, type ToolMap } from '../writer/tool-map.ts';
import type { WriterRunSpec } from '../writer/writer-run.ts';
import { indexMessages } from './message-index.ts';
import type { FoldReply, SessionSummary } from './worker-messages.ts';

/** Envelope fields Baton adds to agent messages; everything else is sent to the model as the agent sent it. */
const ENVELOPE = new Set(['id', 'agent_id', 'finish_reason', 'usage', 'created_at']);

/** The agent's message as it went to its provider (Baton's envelope fields removed, key order kept). */
export function toProviderMessage(m: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (!ENVELOPE.has(k)) out[k] = v;
  return out;
}

/**
 * The event the session machine consumes for a logged record, or null for records that are not inputs
 * (`session.opened`, `decision`). Fields a later version added get their defaults here (`SessionEventSchema`).
 */
export function sessionEventOf(record: StoredSessionRecord): SessionEvent | null {
  switch (record.type) {
    case 'session.opened':
    case 'decision':
      return null;
    case 'messages.appended':
      return { type: 'messages.appended', messages: indexMessages(record.payload.messages) };
    case 'session.resumed':
    case 'tasks.replaced':
    case 'checkpoint.requested':
    case 'writer.settled':
    case 'close.requested':
    case 'drain.requested':
    case 'rebuild.requested':
    case 'timer.fired':
    case 'rebuild.rendered':
    case 'rebuild.compacted':
    case 'rebuild.abandoned':
      return SessionEventSchema.parse({ ...record.payload, type: record.type });
  }
}

export function summarize(snapshot: SnapshotFrom<typeof sessionMachine>): SessionSummary {
  const ctx = snapshot.context;
  const slot = slotOf(ctx);
  return {
    value: snapshot.value,
    tokens: ctx.tokens,
    usableWindow: ctx.input.usableWindow,
    nextThreshold: nextThreshold(ctx),
    watermark: ctx.watermark,
    writer: slot === 'runningPending' ? 'running+pending' : slot,
    writerId: ctx.writer?.writerId ?? null,
    overflow: isOverflow(ctx),
    closed: ctx.closed,
    closing: ctx.closeRequestId !== null,
    rebuilding: ctx.rebuild !== null,
    rebuildRequestId: ctx.rebuild?.requestId ?? null,
    lastOutcome: ctx.lastOutcome,
  };
}

/** The context after a rebuild: the boundary message, then the tail with cleared tool outputs replaced. */
export function rebuiltContext(boundary: Message, context: readonly Message[], tailIds: readonly string[], cleared: readonly string[], clearedText: string): Message[] {
  const byId = new Map(context.map((m) => [m.id, m]));
  const clear = new Set(cleared);
  const tail = tailIds.flatMap((id) => {
    const m = byId.get(id);
    if (m === undefined) return [];
    return [clear.has(id) ? { ...m, content: clearedText } : m];
  });
  return [boundary, ...tail];
}

/** One session actor living in a worker: its machine snapshot plus the message bodies a writer forks from. */
export class HostedSession {
  readonly setup: SessionSetup;
  readonly toolMap: ToolMap;
  snapshot: SnapshotFrom<typeof sessionMachine>;
  /** Every message ever appended, all slices. */
  readonly messages: Message[] = [];
  /**
   * The agent's current main-slice context: every main message until the first rebuild, then Baton's boundary message
   * followed by the preserved tail and what came after.
   */
  conversation: Message[] = [];
  /** `at` of the record that started the running writer. */
  writerStartedAt: number | null = null;
  /** `at` of the record that settled the last writer. */
  lastSettledAt: number | null = null;

  constructor(setup: SessionSetup) {
    this.setup = setup;
    this.toolMap = resolveToolMap(setup.writerTools, setup.tools).map;
    this.snapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, setup.input).snapshot;
  }

  get context(): SessionContext {
    return this.snapshot.context;
  }

  /** Folds one logged record; returns the effects (none for records that are not inputs). */
  fold(record: StoredSessionRecord): FoldReply {
    const event = sessionEventOf(record);
    if (event === null) return { summary: summarize(this.snapshot), effects: [], context: null };
    if (record.type === 'messages.appended') {
      const appended = record.payload.messages;
      this.messages.push(...appended);
      this.conversation.push(...appended.filter((m) => m.agent_id === undefined || m.agent_id === 'main'));
    }
    const before = this.snapshot.context;
    const step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, this.snapshot, event);
    this.snapshot = step.snapshot;
    const after = this.snapshot.context;
    // A rebuild that completed replaces the context: the record carries the boundary message Baton inserted.
    if ((record.type === 'rebuild.rendered' || record.type === 'rebuild.compacted') && before.rebuild !== null && after.rebuild === null) {
      const { message, tailIds, cleared, clearedText } = record.payload;
      if (message !== undefined) this.conversation = rebuiltContext(message, this.conversation, tailIds, cleared ?? [], clearedText ?? '');
    }
    if (after.writer !== null && after.writer.writerId !== before.writer?.writerId) this.writerStartedAt = record.at;
    if (after.lastOutcome !== before.lastOutcome) this.lastSettledAt = record.at;
    const answersWithContext = step.effects.some((e) => e.kind === 'rebuild.reply' && e.withContext);
    return { summary: summarize(this.snapshot), effects: step.effects, context: answersWithContext ? [...this.conversation] : null };
  }

  /** The request prefix and tools for a writer the session just started. */
  writerSpec(effect: WriterStartEffect, writerModel: string | null): WriterRunSpec {
    const main = this.conversation;
    const end = main.findIndex((m) => m.id === effect.boundary);
    const from = effect.mode === 'delta' && effect.deltaFrom !== null ? Math.max(0, main.findIndex((m) => m.id === effect.deltaFrom)) : 0;
    const slice = end >= 0 ? main.slice(from, end + 1) : [];
    const system = this.setup.system;
    const systemMessages =
      effect.mode === 'fork' && system !== null
        ? (typeof system === 'string' ? [system] : system).map((content) => ({ role: 'system', content }))
        : [];
    return {
      input: {
        writerId: effect.writerId,
        sessionId: this.setup.input.sessionId,
        mode: effect.mode,
        boundary: effect.boundary,
        maxReentries: 3,
        maxContinuations: 2,
      },
      projectId: this.setup.projectId,
      model: writerModel ?? this.setup.model,
      trigger: effect.trigger,
      watermark: effect.watermark,
      prefix: [...systemMessages, ...slice.map(toProviderMessage)],
      agentTools: this.setup.tools,
      toolMap: effect.mode === 'fork' ? this.toolMap : null,
      tasks: this.context.tasks,
    };
  }
}
