import type { CompactionSource } from '@baton/actors';
import type { SessionInputRecord } from '@baton/log-schema';
import {
  defaultTokenCounter,
  extractiveSummary,
  loadPrompt,
  loadPromptLabels,
  selectRecentUserInput,
  truncateHeadTail,
  type ChatMessageLike,
} from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { type HostedSession, type MessageSource, toProviderMessage } from './session-host.ts';
import type { ModelClients } from '../model/model-clients.ts';
import { summaryCall } from '../model/summary-call.ts';
import { DEFAULT_FIT_OPTIONS, clearedNote, sessionCosts, shrinkOptions, type FitOptions } from '../rebuild/fit-costs.ts';
import type { FitReport } from '../rebuild/fit-rebuild.ts';
import { fitTail, type TailFit } from '../rebuild/fit-tail.ts';
import { textOf } from '../rebuild/message-text.ts';
import { isBatonBoundary, preservedTail } from '../rebuild/preserved-tail.ts';
import { boundaryMessage } from './render-rebuild.ts';

/** The payload of the `rebuild.compacted` input. */
export type RebuildCompacted = Extract<SessionInputRecord, { type: 'rebuild.compacted' }>['payload'];

/** Most tokens of the summary, and of the user's words quoted after a model's summary (fewer in a small window). */
const SUMMARY_CAP = 8_000;
const USERS_CAP = 8_000;
/** Shares of the usable window the summary, the quoted user words and the summary request's transcript may take. */
const SUMMARY_SHARE = 0.25;
const USERS_SHARE = 0.15;
const TRANSCRIPT_SHARE = 0.5;
const MIN_TAIL_SHARE = 0.5;
const MAX_ATTEMPTS = 4;

/**
 * The compaction fallback: a summary of the conversation up to `boundary` in the session's API — one
 * model request, or, when the model cannot be reached, fails, or the agent's own compaction is being answered (no
 * upstream call then), a deterministic extractive summary — and the tail after it. Like a rendered rebuild it is
 * fitted into the session's usable window by its calibrated count: the tail is cut to its newest steps when it would
 * not fit (what was cut is summarised too), the summary request's transcript is bounded so that it fits the window
 * itself, and the user's words are quoted after a model's summary. Returns the payload of the `rebuild.compacted`
 * input.
 */
export async function compactConversation(
  session: HostedSession,
  effect: { requestId: string; boundary: string | null },
  options: { clients: ModelClients; model: string; timeoutMs?: number; source: MessageSource; fit?: FitOptions },
): Promise<RebuildCompacted> {
  // Taken now, when the session asked for it: later inputs may change the session.
  const ids = session.contextIds();
  const ctx = session.context;
  const { rebuildSeq } = ctx;
  const extractiveOnly = ctx.rebuild?.reason === 'compaction';
  const carriedUsers = session.uncovered.users;
  const conversation = await session.resolve(ids, options.source);
  const fit = options.fit ?? DEFAULT_FIT_OPTIONS;
  const costs = sessionCosts(ctx);
  const counter = defaultTokenCounter;
  const candidates = effect.boundary === null ? [] : preservedTail(conversation, effect.boundary);
  const candidateCost = candidates.reduce((sum, m) => sum + costs.message(m, false), 0);
  const limit = costs.usable;
  const target = Math.floor(limit * fit.targetShare);
  const ratio = ctx.calibration.text;
  let scale = 1;
  let best: { payload: RebuildCompacted; total: number } | null = null;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const summaryCap = Math.floor(Math.min(SUMMARY_CAP, limit > 0 ? (limit * SUMMARY_SHARE) / ratio : SUMMARY_CAP) * scale);
    const usersCap = Math.floor(Math.min(USERS_CAP, limit > 0 ? (limit * USERS_SHARE) / ratio : USERS_CAP) * scale);
    const boundaryRoom = costs.text(summaryCap + usersCap);
    let tail: TailFit | null = null;
    if (limit > 0 && costs.overhead + boundaryRoom + candidateCost > target) {
      const room = Math.max(0, limit - costs.overhead - boundaryRoom);
      const budget = Math.min(room, Math.max(target - costs.overhead - boundaryRoom, Math.floor(room * MIN_TAIL_SHARE)));
      tail = fitTail({ candidates, cost: costs.message, measure: costs.measure, ratioOf: costs.ratioOf, budget, limit: Math.max(budget, room), minSteps: fit.minSteps, clearedText: clearedNote(candidates, costs), shrink: shrinkOptions() });
    }
    const kept = tail?.kept ?? candidates;
    const keptIds = new Set(kept.map((m) => m.id));
    const covered = conversation.filter((m) => !keptIds.has(m.id));
    let summary: string;
    let source: CompactionSource;
    try {
      if (extractiveOnly) throw new Error("the agent's own compaction is answered without a model call");
      const transcriptCap = limit > 0 ? Math.max(1_000, Math.floor((limit * TRANSCRIPT_SHARE) / ratio)) : Number.MAX_SAFE_INTEGER;
      const text = await summaryCall(session.api, options.clients, {
        model: options.model,
        system: loadPrompt('compaction-system').trimEnd(),
        user: boundedTranscript(covered, transcriptCap),
        timeoutMs: options.timeoutMs ?? 60_000,
      });
      if (text.trim() === '') throw new Error('the model returned an empty summary');
      summary = truncateHeadTail(text, summaryCap, () => '[…]', counter)?.text ?? text.slice(0, summaryCap);
      source = 'model';
    } catch {
      summary = extractiveSummary(covered.flatMap(chatLike), { capTokens: summaryCap });
      source = 'extractive';
    }
    // A model's summary may paraphrase the user: their words follow it whole (the extractive one quotes them already).
    const quoted = source === 'model' ? userWords(covered, carriedUsers, usersCap) : '';
    const text = [loadPrompt('compaction-header').trimEnd(), summary, ...(quoted === '' ? [] : [quoted])].join('\n\n');
    const tokens = counter.count(text);
    const tailTokens = kept.reduce((sum, m) => sum + costs.message(m, tail?.changed.has(m.id) ?? false), 0);
    const total = costs.overhead + costs.text(tokens) + tailTokens;
    const id = `baton-compact-${session.setup.input.sessionId}-${rebuildSeq}`;
    const changed = tail?.changed ?? new Map<string, Message>();
    const adjusted = kept.flatMap((m) => (changed.has(m.id) ? [costs.entryOf(m)] : []));
    const report: FitReport = {
      limit,
      target,
      budget: tail === null ? candidateCost : Math.max(0, target - costs.overhead - boundaryRoom),
      tokens: { overhead: costs.overhead, boundary: costs.text(tokens), tail: tailTokens, total },
      fits: limit <= 0 || total <= limit,
      steps: [...(attempt > 0 ? [{ step: 'smaller-caps' as const, messages: 0, tokens: 0 }] : []), ...(tail?.steps ?? [])],
      calibration: { text: ctx.calibration.text, tool: ctx.calibration.tool, image: ctx.calibration.image, message: ctx.calibration.perMessage ?? 0 },
    };
    const payload: RebuildCompacted = {
      requestId: effect.requestId,
      source,
      boundary: { id, role: 'user', tokens, textual: true, finished: false, toolCallIds: [] },
      tailIds: kept.map((m) => m.id),
      message: boundaryMessage(session.api, id, text),
      cleared: [],
      ...(changed.size > 0 ? { replaced: [...changed.values()] } : {}),
      ...(adjusted.length > 0 ? { adjusted } : {}),
      // The checkpoint is what should stand for the conversation: a writer is asked to catch up from the summary.
      catchUp: true,
      fit: report,
    };
    if (best === null || total < best.total) best = { payload, total };
    if (report.fits) return payload;
    scale *= 0.6;
  }
  if (best === null) throw new Error('no compaction attempt was made');
  return best.payload;
}

/** The user's words among `covered` (and those carried from earlier fitted rebuilds), newest first, within `cap`. */
function userWords(covered: readonly Message[], carried: readonly { id: string; text: string }[], cap: number): string {
  const users = [...carried, ...covered.filter((m) => viewOf(m).role === 'user' && !isBatonBoundary(m)).map((m) => ({ id: m.id, text: textOf(m) }))];
  const { recent_user: heading } = loadPromptLabels('rebuild-labels', ['recent_user']);
  const entries = selectRecentUserInput(
    users.map((u) => ({ ...u, verbatim: true })),
    { totalTokens: cap - defaultTokenCounter.count(`${heading}\n`), perMessageTokens: cap },
    defaultTokenCounter,
  );
  return entries.length === 0 ? '' : `${heading}\n${entries.map((e) => e.block).join('\n\n')}`;
}

/**
 * A message as the extractive summary reads it: a chat message as it is; a native one through its view (an
 * Anthropic turn of several tool results becomes one tool message per result).
 */
function chatLike(m: Message): ChatMessageLike[] {
  if (m.native === undefined) return [toProviderMessage(m) as unknown as ChatMessageLike];
  const view = viewOf(m);
  if (view.role === 'tool') return view.toolResults.map((r) => ({ role: 'tool', content: r.text, tool_call_id: r.callId }));
  const calls = view.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return [{ role: view.role, content: view.text, ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
}

/** One message as a line of the summary request's transcript. */
function transcriptLine(m: Message): string {
  const body = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
  const calls = m.tool_calls ? `\n[tool calls] ${JSON.stringify(m.tool_calls)}` : '';
  return `[${m.role}${m.role === 'tool' ? ` ${m.tool_call_id ?? ''}` : ''}] ${body}${calls}`;
}

/**
 * The conversation as plain text for the summary request, its newest part within `cap` tokens (an older part that does
 * not fit is left out and said so): the summary request must fit the model's window like any other.
 */
function boundedTranscript(messages: readonly Message[], cap: number): string {
  const lines = messages
    .flatMap((m) => (m.native === undefined ? [m] : chatLike(m).map((c, i) => ({ ...c, id: `${m.id}-${i}` }) as unknown as Message)))
    .map(transcriptLine);
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i] ?? '';
    const tokens = defaultTokenCounter.count(line) + 2;
    if (used + tokens > cap) {
      const room = cap - used - 20;
      if (room > 200) kept.unshift(truncateHeadTail(line, room, (n) => `[… ${n} tokens left out …]`, defaultTokenCounter)?.text ?? '');
      const omitted = i + (room > 200 ? 0 : 1);
      if (omitted > 0) kept.unshift(`[${omitted} earlier messages left out]`);
      break;
    }
    used += tokens;
    kept.unshift(line);
  }
  return kept.join('\n\n');
}
