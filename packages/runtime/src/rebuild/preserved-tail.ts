import type { Message } from '@baton/protocol';

/** Tools whose old outputs a rebuild clears (reference §2.7), compared case-insensitively with `-`/`_` ignored. */
const COMPACTABLE = ['read', 'readfile', 'viewimage', 'view', 'bash', 'shell', 'grep', 'glob', 'webfetch', 'websearch', 'edit', 'editfile', 'write', 'writefile', 'multiedit', 'applypatch', 'codesearch', 'strreplace', 'cat', 'search', 'listfiles', 'findfiles'];

const norm = (s: string): string => s.toLowerCase().replace(/[-_]/g, '');

export function isCompactableTool(name: string): boolean {
  return COMPACTABLE.includes(norm(name));
}

/** Messages Baton inserted at a rebuild or compaction (their ids carry Baton's prefix). */
export function isBatonBoundary(m: Message): boolean {
  return m.id.startsWith('baton-');
}

/**
 * The preserved tail of a rebuild: the context's messages after the watermark; when the watermark is no longer in the
 * context (an earlier rebuild already replaced it), every message except Baton's own boundary messages, so the tail
 * and a pending user message are never dropped (fix of reference §7.6-G). Tool results whose call is not in the tail
 * (orphans) are dropped, so the tail is a valid OpenAI message sequence.
 */
export function preservedTail(context: readonly Message[], watermark: string | null): Message[] {
  const at = watermark === null ? -1 : context.findIndex((m) => m.id === watermark);
  const candidates = at >= 0 ? context.slice(at + 1) : context.filter((m) => !isBatonBoundary(m));
  const calls = new Set<string>();
  const out: Message[] = [];
  for (const m of candidates) {
    if (m.role === 'tool') {
      if (typeof m.tool_call_id !== 'string' || !calls.has(m.tool_call_id)) continue;
    }
    for (const c of m.tool_calls ?? []) {
      const id = (c as { id?: unknown }).id;
      if (typeof id === 'string') calls.add(id);
    }
    out.push(m);
  }
  return dropUnansweredCalls(out);
}

/**
 * Removes tool calls that no tool message in the sequence answers, except on the last assistant message (the agent
 * may still be running them). An assistant left with no content and no calls is dropped.
 */
function dropUnansweredCalls(messages: Message[]): Message[] {
  const answered = new Set(messages.flatMap((m) => (m.role === 'tool' && typeof m.tool_call_id === 'string' ? [m.tool_call_id] : [])));
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  return messages.flatMap((m, i) => {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls) || i === lastAssistant) return [m];
    const kept = m.tool_calls.filter((c) => answered.has(String((c as { id?: unknown }).id)));
    if (kept.length === m.tool_calls.length) return [m];
    if (kept.length === 0 && (m.content === null || m.content === '')) return [];
    const copy: Message = { ...m };
    if (kept.length === 0) delete (copy as { tool_calls?: unknown }).tool_calls;
    else copy.tool_calls = kept;
    return [copy];
  });
}

/** Ids of tool messages in `tail` whose output a rebuild clears (results of compactable tools). */
export function clearableToolResults(tail: readonly Message[]): string[] {
  const names = new Map<string, string>();
  for (const m of tail) {
    for (const c of m.tool_calls ?? []) {
      const call = c as { id?: unknown; function?: { name?: unknown } };
      if (typeof call.id === 'string' && typeof call.function?.name === 'string') names.set(call.id, call.function.name);
    }
  }
  return tail.flatMap((m) => (m.role === 'tool' && typeof m.tool_call_id === 'string' && isCompactableTool(names.get(m.tool_call_id) ?? '') ? [m.id] : []));
}
