import type { SessionInputRecord } from '@baton/log-schema';
import { extractiveSummary, loadPrompt, countTokensOnce } from '@baton/memory-store';
import type OpenAI from 'openai';
import { type HostedSession, type MessageSource, toProviderMessage } from '../host/session-host.ts';
import type { Message } from '@baton/protocol';
import { preservedTail } from './preserved-tail.ts';
import { boundaryMessage } from './render-rebuild.ts';

/** The payload of the `rebuild.compacted` input. */
export type RebuildCompacted = Extract<SessionInputRecord, { type: 'rebuild.compacted' }>['payload'];

/**
 * The compaction fallback (SPEC §2.6): one summary request of the conversation up to `boundary` through the `openai`
 * SDK; when the model cannot be reached or fails, a deterministic extractive summary, so the agent always gets a
 * usable context. The tail after the boundary is preserved. Returns the payload of the `rebuild.compacted` input.
 */
export async function compactConversation(
  session: HostedSession,
  effect: { requestId: string; boundary: string | null },
  options: { openai: OpenAI; model: string; timeoutMs?: number; source: MessageSource },
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
    const res = await options.openai.chat.completions.create(
      {
        model: options.model,
        messages: [
          { role: 'system', content: loadPrompt('compaction-system').trimEnd() },
          { role: 'user', content: transcript(covered) },
        ],
      },
      { timeout: options.timeoutMs ?? 60_000, maxRetries: 1 },
    );
    const text = res.choices[0]?.message.content ?? '';
    if (text.trim() === '') throw new Error('the model returned an empty summary');
    summary = text;
    source = 'model';
  } catch {
    summary = extractiveSummary(covered.map(toProviderMessage) as never);
    source = 'extractive';
  }
  const text = `${loadPrompt('compaction-header').trimEnd()}\n\n${summary}`;
  const id = `baton-compact-${session.setup.input.sessionId}-${rebuildSeq}`;
  return {
    requestId: effect.requestId,
    source,
    boundary: { id, role: 'user', tokens: countTokensOnce(text), textual: true, finished: false, toolCallIds: [] },
    tailIds: tail.map((m) => m.id),
    message: boundaryMessage(id, text),
    cleared: [],
  };
}

/** The conversation as plain text for the summary request. */
function transcript(messages: readonly Message[]): string {
  return messages
    .map((m) => {
      const body = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
      const calls = m.tool_calls ? `\n[tool calls] ${JSON.stringify(m.tool_calls)}` : '';
      return `[${m.role}${m.role === 'tool' ? ` ${m.tool_call_id ?? ''}` : ''}] ${body}${calls}`;
    })
    .join('\n\n');
}
