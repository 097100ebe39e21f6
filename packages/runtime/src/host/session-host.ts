import {
  SessionEventSchema,
  foldEvent,
  foldStart,
  indexIds,
  isOverflow,
  nextThreshold,
  sessionMachine,
  slotOf,
  type SessionContext,
  type SessionEffect,
  type SessionEvent,
  type WriterStartEffect,
} from '@baton/actors';
import type { SessionSetup, SessionSnapshot, StoredSessionRecord } from '@baton/log-schema';
import { DEFAULT_PROVIDER_API, providerMessages, toProviderMessage, viewOf, withToolOutputs, type Message, type ProviderApi } from '@baton/protocol';

export { toProviderMessage };
import { countTokensOnce } from '@baton/memory-store';
import type { SnapshotFrom } from 'xstate';
import { NOTHING_UNCOVERED, type Uncovered } from '../rebuild/fit-rebuild.ts';
import { resolveToolMap, type ToolMap } from '../writer/tool-map.ts';
import type { WriterRunSpec } from '../writer/writer-run.ts';
import { indexMessages } from '../rebuild/message-index.ts';
import type { FoldReply, SessionSummary } from './worker-messages.ts';

/**
 * The event the session machine consumes for a logged record, or null for records that are not inputs
 * (`session.opened`, `session.bound`, `decision`, `snapshot`). Fields a later version added get their defaults here.
 */
export function sessionEventOf(record: StoredSessionRecord): SessionEvent | null {
  switch (record.type) {
    case 'session.opened':
    case 'session.bound':
    case 'session.handoff_granted':
    case 'session.continued':
    case 'decision':
    case 'snapshot':
      return null;
    case 'messages.appended':
      return { type: 'messages.appended', messages: indexMessages(record.payload.messages) };
    case 'session.resumed':
    case 'tasks.replaced':
    case 'checkpoint.requested':
    case 'writer.settled':
    case 'close.requested':
    case 'drain.requested':
    case 'drain.lifted':
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
    draining: ctx.draining,
    rebuilding: ctx.rebuild !== null,
    rebuildRequestId: ctx.rebuild?.requestId ?? null,
    lastOutcome: ctx.lastOutcome,
    ...(ctx.calibration.observations > 0
      ? { calibration: { text: ctx.calibration.text, tool: ctx.calibration.tool, image: ctx.calibration.image, message: ctx.calibration.perMessage ?? 0 } }
      : {}),
    ...(ctx.lastPromptTokens !== null ? { lastPromptTokens: ctx.lastPromptTokens } : {}),
    ...(ctx.overWindow > 0 ? { overWindow: ctx.overWindow } : {}),
  };
}

/** Baton's count of a session's system prompt and tool definitions, as its requests carry them. */
export function overheadTokens(setup: Pick<SessionSetup, 'system' | 'tools' | 'inherited'>): number {
  const system = setup.system === null ? '' : typeof setup.system === 'string' ? setup.system : setup.system.map((s) => (typeof s === 'string' ? s : JSON.stringify(s))).join('\n');
  const tools = setup.tools === null || setup.tools.length === 0 ? '' : JSON.stringify(setup.tools);
  // An inherited context rides on every request right after the system prompt: it is overhead like the prompt.
  const inherited = (setup.inherited ?? []).map((m) => viewOf(m).text).join('\n');
  return (system === '' ? 0 : countTokensOnce(system)) + (tools === '' ? 0 : countTokensOnce(tools)) + (inherited === '' ? 0 : countTokensOnce(inherited));
}

/** Where a session host reads message bodies: the event log, on the main thread. */
export interface MessageSource {
  /** The bodies of `ids` in that order (an id the log does not hold is left out). */
  messages(sessionId: string, ids: readonly string[]): Promise<Message[]>;
  /** The newest `limit` main-slice messages ever appended to the session, oldest first. */
  recentMain(sessionId: string, limit: number): Promise<Message[]>;
}

/**
 * One session actor living in a worker: its machine snapshot and what the context needs besides the log — the
 * boundary messages Baton inserted and the tool outputs it cleared, for the messages still in the context. Message
 * bodies are not kept: they are read from the log when a writer, a rebuild or a compaction needs them.
 */
export class HostedSession {
  readonly setup: SessionSetup;
  readonly toolMap: ToolMap;
  snapshot: SnapshotFrom<typeof sessionMachine>;
  /** Seq of the last input folded. */
  foldedSeq = 0;
  /** Boundary messages Baton inserted, by id (only those still in the context). */
  readonly #inserted = new Map<string, Message>();
  /** Cleared tool outputs, by message id: the text that replaces the content (only for messages in the context). */
  readonly #cleared = new Map<string, string>();
  /** Tail messages a fitted rebuild sends otherwise than they were recorded, by id (only those in the context). */
  readonly #replaced = new Map<string, Message>();
  /** What fitted rebuilds took out of the context and no checkpoint covers yet. */
  #uncovered: Uncovered = NOTHING_UNCOVERED;
  /** `at` of the record that started the running writer. */
  writerStartedAt: number | null = null;
  /** `at` of the record that settled the last writer. */
  lastSettledAt: number | null = null;

  constructor(setup: SessionSetup, from: SessionSnapshot | null = null) {
    this.setup = setup;
    this.toolMap = resolveToolMap(setup.writerTools, setup.tools).map;
    if (from === null) {
      // What every request carries besides its messages is counted here, where the messages are (the same count in a
      // replay): the calibration compares it, with the messages, against what the provider reports.
      const input = { ...setup.input, overheadTokens: setup.input.overheadTokens ?? overheadTokens(setup) };
      this.snapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, input).snapshot;
      return;
    }
    this.snapshot = sessionMachine.resolveState({ value: from.state.value as never, context: from.state.context });
    this.foldedSeq = from.for;
    for (const m of from.host.inserted) this.#inserted.set(m.id, m);
    for (const [id, text] of from.host.cleared) this.#cleared.set(id, text);
    for (const m of from.host.replaced ?? []) this.#replaced.set(m.id, m);
    this.#uncovered = from.host.uncovered ?? NOTHING_UNCOVERED;
    this.writerStartedAt = from.host.writerStartedAt;
    this.lastSettledAt = from.host.lastSettledAt;
  }

  get context(): SessionContext {
    return this.snapshot.context;
  }

  /** What fitted rebuilds took out of the context and no checkpoint covers yet (the next rebuild carries it on). */
  get uncovered(): Uncovered {
    return this.#uncovered;
  }

  /** The agent's provider API (sessions recorded before there was a choice are chat sessions). */
  get api(): ProviderApi {
    return this.setup.api ?? DEFAULT_PROVIDER_API;
  }

  /** The folded state, as a `snapshot` record stores it. */
  toSnapshot(): SessionSnapshot {
    return {
      for: this.foldedSeq,
      state: { value: this.snapshot.value, context: this.snapshot.context },
      host: {
        inserted: [...this.#inserted.values()],
        cleared: [...this.#cleared.entries()],
        ...(this.#replaced.size > 0 ? { replaced: [...this.#replaced.values()] } : {}),
        ...(this.#uncovered !== NOTHING_UNCOVERED ? { uncovered: this.#uncovered } : {}),
        writerStartedAt: this.writerStartedAt,
        lastSettledAt: this.lastSettledAt,
      },
    };
  }

  /** Folds one logged record; returns the effects (none for records that are not inputs). */
  fold(record: StoredSessionRecord): Omit<FoldReply, 'context'> {
    const event = sessionEventOf(record);
    if (event === null) return { summary: summarize(this.snapshot), effects: [] };
    const before = this.snapshot.context;
    const step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, this.snapshot, event);
    this.snapshot = step.snapshot;
    this.foldedSeq = record.seq;
    const after = this.snapshot.context;
    // A rebuild that completed replaces the context: the record carries the boundary message Baton inserted.
    if ((record.type === 'rebuild.rendered' || record.type === 'rebuild.compacted') && before.rebuild !== null && after.rebuild === null) {
      const { message, cleared, clearedText, replaced, uncovered } = record.payload;
      if (message !== undefined) this.#inserted.set(message.id, message);
      for (const id of cleared ?? []) this.#cleared.set(id, clearedText ?? '');
      for (const m of replaced ?? []) this.#replaced.set(m.id, m);
      this.#uncovered = uncovered ?? NOTHING_UNCOVERED;
      this.#forgetOutsideContext();
    }
    // A checkpoint that now covers a message of the current context covers the boundary Baton inserted before it, and
    // so what that boundary listed as not covered yet.
    if (after.watermark !== before.watermark && after.watermark !== null && this.#uncovered !== NOTHING_UNCOVERED && this.contextIds().includes(after.watermark)) {
      this.#uncovered = NOTHING_UNCOVERED;
    }
    if (after.writer !== null && after.writer.writerId !== before.writer?.writerId) this.writerStartedAt = record.at;
    if (after.lastOutcome !== before.lastOutcome) this.lastSettledAt = record.at;
    return { summary: summarize(this.snapshot), effects: step.effects };
  }

  #forgetOutsideContext(): void {
    const ids = new Set(indexIds(this.context.index));
    for (const id of [...this.#inserted.keys()]) if (!ids.has(id)) this.#inserted.delete(id);
    for (const id of [...this.#cleared.keys()]) if (!ids.has(id)) this.#cleared.delete(id);
    for (const id of [...this.#replaced.keys()]) if (!ids.has(id)) this.#replaced.delete(id);
  }

  /** Ids of the agent's current main-slice context, in order (Baton's boundary message first after a rebuild). */
  contextIds(): string[] {
    return indexIds(this.context.index);
  }

  /**
   * The messages of `ids` as the agent's context holds them: bodies from the log, Baton's boundary messages, and
   * cleared tool outputs replaced by their marker.
   */
  resolve(ids: readonly string[], source: MessageSource): Promise<Message[]> {
    // Taken before reading the log: a rebuild folded meanwhile must not change what these ids resolve to.
    const inserted = new Map(
      ids.flatMap((id) => {
        const m = this.#inserted.get(id) ?? this.#replaced.get(id);
        return m === undefined ? [] : [[id, m] as const];
      }),
    );
    const cleared = new Map(ids.flatMap((id) => (this.#cleared.has(id) ? [[id, this.#cleared.get(id) as string] as const] : [])));
    const fromLog = ids.filter((id) => !inserted.has(id));
    return source.messages(this.setup.input.sessionId, fromLog).then((found) => {
      const bodies = new Map(found.map((m) => [m.id, m]));
      return ids.flatMap((id) => {
        const m = inserted.get(id) ?? bodies.get(id);
        if (m === undefined) return [];
        const text = cleared.get(id);
        return [text === undefined ? m : withToolOutputs(m, text)];
      });
    });
  }

  /** The ids a writer the session just started forks from: the context up to the frozen boundary. */
  writerPrefixIds(effect: WriterStartEffect): string[] {
    const ids = this.contextIds();
    const end = ids.indexOf(effect.boundary);
    const from = effect.mode === 'delta' && effect.deltaFrom !== null ? Math.max(0, ids.indexOf(effect.deltaFrom)) : 0;
    return end >= 0 ? ids.slice(from, end + 1) : [];
  }

  /**
   * The request prefix and tools for a writer, given the messages of `writerPrefixIds`, in the session's API. A chat
   * prefix starts with the agent's system messages; the other APIs carry the system prompt beside the messages. A
   * Responses reasoning item never ends a request: trailing ones are left out (they belong with an item not covered).
   */
  writerSpec(effect: WriterStartEffect, slice: readonly Message[], writerModel: string | null, userRequests: readonly string[] = []): WriterRunSpec {
    const api = this.api;
    const fork = effect.mode === 'fork';
    const system = this.setup.system;
    const systemMessages = fork && api === 'openai-chat' && system !== null ? (typeof system === 'string' ? [system] : system).map((content) => ({ role: 'system', content })) : [];
    let end = slice.length;
    while (api === 'openai-responses' && end > 0 && viewOf(slice[end - 1] as Message).reasoning) end--;
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
      api,
      // A fork starts as the agent's requests do: an inherited context (a handoff) right after the system prompt.
      prefix: [...systemMessages, ...providerMessages([...(fork ? (this.setup.inherited ?? []) : []), ...slice.slice(0, end)], api)],
      system: fork && api !== 'openai-chat' ? system : null,
      agentTools: this.setup.tools,
      params: this.setup.params ?? {},
      headers: this.setup.headers ?? {},
      toolMap: effect.mode === 'fork' ? this.toolMap : null,
      tasks: this.context.tasks,
      userRequests,
      // The rules the previous writer's refused draft broke (a validation failure names them).
      guidance: this.context.lastOutcome?.failure?.kind === 'validation' ? (this.context.lastOutcome.failure.rules ?? []) : [],
    };
  }
}
