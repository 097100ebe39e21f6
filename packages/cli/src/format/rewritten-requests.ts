import type { SessionTimeline } from '@baton/runtime';

/**
 * For a session the gateway records: which of its requests went upstream rewritten onto a rebuilt context, as the
 * seq of each `messages.appended` record (one per call the gateway recorded) → the number of the rebuild it was sent
 * on. Once a rebuild succeeds the gateway sends every later call of the session on it (system prompt, rebuilt
 * context, the messages since), so every call recorded after one is a rewritten one. Empty for other sessions.
 */
export function rewrittenRequests(t: SessionTimeline): ReadonlyMap<number, number> {
  const out = new Map<number, number>();
  const sessionEntries = t.entries.filter((e) => e.writerId === null);
  const opened = sessionEntries[0];
  if (opened?.type !== 'session.opened' || opened.payload.request.agent !== 'gateway') return out;
  let rebuilds = 0;
  for (const entry of sessionEntries) {
    if ((entry.type === 'rebuild.rendered' && entry.payload.ok) || entry.type === 'rebuild.compacted') rebuilds++;
    else if (entry.type === 'messages.appended' && rebuilds > 0) out.set(entry.seq, rebuilds);
  }
  return out;
}
