import { keepingToolCalls, keepingToolResults, viewOf, type Message } from '@baton/protocol';

/** Tools whose old outputs a rebuild clears, compared case-insensitively with `-`/`_` ignored. */
const COMPACTABLE = ['read', 'readfile', 'viewimage', 'view', 'bash', 'shell', 'localshell', 'grep', 'glob', 'webfetch', 'websearch', 'edit', 'editfile', 'write', 'writefile', 'multiedit', 'applypatch', 'codesearch', 'strreplace', 'cat', 'search', 'listfiles', 'findfiles'];

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
 * and a pending user message are never dropped. The tail is a valid request in the
 * session's API: tool results whose call is not in the tail (orphans) are dropped, calls nobody answered are dropped
 * except in the last assistant turn, and a Responses reasoning item stays only right before the item it belongs to (one
 * at the watermark comes along with that item).
 */
export function preservedTail(context: readonly Message[], watermark: string | null): Message[] {
  const at = watermark === null ? -1 : context.findIndex((m) => m.id === watermark);
  let from = at + 1;
  while (at >= 0 && from > 0 && viewOf(context[from - 1] as Message).reasoning) from--;
  return validTail(at >= 0 ? context.slice(from) : context.filter((m) => !isBatonBoundary(m)));
}

/**
 * `candidates` as a valid request in the session's API: tool results whose call is not among them (orphans) dropped,
 * calls nobody answered dropped except in the last assistant turn, a Responses reasoning item kept only right before
 * the item it belongs to.
 */
export function validTail(candidates: readonly Message[]): Message[] {
  const calls = new Set<string>();
  const out: Message[] = [];
  for (const candidate of candidates) {
    const view = viewOf(candidate);
    const m = view.role === 'tool' ? keepingToolResults(candidate, calls) : candidate;
    if (m === null) continue;
    for (const c of view.toolCalls) calls.add(c.id);
    out.push(m);
  }
  return dropDanglingReasoning(dropUnansweredCalls(out));
}

/**
 * Removes tool calls that no tool result in the sequence answers, except in the last assistant turn (the agent may
 * still be running them). A message left with nothing is dropped.
 */
function dropUnansweredCalls(messages: readonly Message[]): Message[] {
  const views = messages.map(viewOf);
  const answered = new Set(views.flatMap((v) => v.toolResults.map((r) => r.callId)));
  // The last assistant turn: the last assistant message and the assistant messages right before it (a Responses
  // reply is one item per call).
  let lastTurn = views.findLastIndex((v) => v.role === 'assistant');
  while (lastTurn > 0 && views[lastTurn - 1]?.role === 'assistant') lastTurn--;
  const lastAssistant = views.findLastIndex((v) => v.role === 'assistant');
  return messages.flatMap((m, i) => {
    if (views[i]?.toolCalls.length === 0 || (i >= lastTurn && i <= lastAssistant)) return [m];
    const kept = keepingToolCalls(m, answered);
    return kept === null ? [] : [kept];
  });
}

/** Drops Responses reasoning items not followed by the assistant item they belong to. */
function dropDanglingReasoning(messages: readonly Message[]): Message[] {
  const views = messages.map(viewOf);
  return messages.filter((_, i) => {
    if (!views[i]?.reasoning) return true;
    const next = views[i + 1];
    return next !== undefined && next.role === 'assistant';
  });
}

/** Index of the first message after the newest assistant message: the results from there on the model has not seen. */
export function unseenFrom(messages: readonly Message[]): number {
  const views = messages.map(viewOf);
  return views.findLastIndex((v) => v.role === 'assistant' && !v.reasoning) + 1;
}

/**
 * Ids of messages in `tail` whose tool output a rebuild clears: every result they carry answers a compactable tool
 * (a turn that also answers another tool keeps its outputs), and the model has seen it (results after the newest
 * assistant message are what the model is about to read: they are never old).
 */
export function clearableToolResults(tail: readonly Message[]): string[] {
  const names = new Map<string, string>();
  for (const m of tail) for (const c of viewOf(m).toolCalls) names.set(c.id, c.name);
  const unseen = unseenFrom(tail);
  return tail.flatMap((m, i) => {
    if (i >= unseen) return [];
    const view = viewOf(m);
    if (view.role !== 'tool' || view.toolResults.length === 0) return [];
    return view.toolResults.every((r) => isCompactableTool(names.get(r.callId) ?? '')) ? [m.id] : [];
  });
}
