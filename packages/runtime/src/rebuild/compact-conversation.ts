import type { SessionInputRecord } from '@baton/log-schema';
import { extractiveSummary, loadPrompt, countTokensOnce, type ChatMessageLike } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { type HostedSession, type MessageSource, toProviderMessage } from '../host/session-host.ts';
import type { ModelClients } from '../model/model-clients.ts';
import { summaryCall } from '../model/summary-call.ts';
import { preservedTail } from './preserved-tail.ts';
import { boundaryMessage } from './render-rebuild.ts';

/** The payload of the `rebuild.compacted` input. */
export type RebuildCompacted = Extract<SessionInputRecord, { type: 'rebuild.compacted' }>['payload'];

/**
 * The compaction fallback (SPEC §2.6): one summary request of the conversation up to `boundary` in the session's API;
 * when the model cannot be reached or fails, a deterministic extractive summary, so the agent always gets a
 * usable context. The tail after the boundary is preserved. Returns the payload of the `rebuild.compacted` input.
 */
export async function compactConversation(
  session: HostedSession,
  effect: { requestId: string; boundary: string | null },
  options: { clients: ModelClients; model: string; timeoutMs?: number; source: MessageSource },
): Promise<RebuildCompacted> {
  // Taken now, when the session asked for it: later inputs may change the session.
  const ids = session.contextIds();
  const { rebuildSeq } = session.context;
  const conversation = await session.resolve(ids, options.source);
  const at = effect.boundary === null ? conversation.length - 1 : conversation.findIndex((m) => m.id === effect.boundary);
  const covered = conversation.slice(0, at + 1);
  const tail = effect.boundary === null ? [] : preservedTail(conversation, effect.boundary);
  let summary: string;
  let source: 'model' | 'extractive';
  try {
    const text = await summaryCall(session.api, options.clients, {
      model: options.model,
      system: loadPrompt('compaction-system').trimEnd(),
      user: transcript(covered),
      timeoutMs: options.timeoutMs ?? 60_000,
    });
    if (text.trim() === '') throw new Error('the model returned an empty summary');
    summary = text;
    source = 'model';
  } catch {
    summary = extractiveSummary(covered.flatMap(chatLike));
    source = 'extractive';
  }
  const text = `${loadPrompt('compaction-header').trimEnd()}\n\n${summary}`;
  const id = `baton-compact-${session.setup.input.sessionId}-${rebuildSeq}`;
  return {
    requestId: effect.requestId,
    source,
    boundary: { id, role: 'user', tokens: countTokensOnce(text), textual: true, finished: false, toolCallIds: [] },
    tailIds: tail.map((m) => m.id),
    message: boundaryMessage(session.api, id, text),
    cleared: [],
  };
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

/** The conversation as plain text for the summary request. */
function transcript(messages: readonly Message[]): string {
  return messages
    .flatMap((m) => (m.native === undefined ? [m] : chatLike(m).map((c, i) => ({ ...c, id: `${m.id}-${i}` }) as unknown as Message)))
    .map((m) => {
      const body = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
      const calls = m.tool_calls ? `\n[tool calls] ${JSON.stringify(m.tool_calls)}` : '';
      return `[${m.role}${m.role === 'tool' ? ` ${m.tool_call_id ?? ''}` : ''}] ${body}${calls}`;
    })
    .join('\n\n');
}
