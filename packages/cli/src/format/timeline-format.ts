import { type SessionTimeline, type TimelineEntry } from '@baton/runtime';
import { groupDigits, offset, shortWriterId } from './numbers.ts';
import { recordFacts } from './record-facts.ts';
import { rewrittenRequests } from './rewritten-requests.ts';

/** Header lines of a readable timeline. */
export function timelineHeader(t: SessionTimeline): string[] {
  const input = t.setup.input;
  return [
    `session ${t.sessionId} · project ${t.setup.projectId} · model ${t.setup.model}`,
    `opened ${new Date(t.openedAt).toISOString()} · usable window ${groupDigits(input.usableWindow)} · thresholds ${input.thresholds.map(groupDigits).join(' · ') || 'none'}`,
    `${t.entries.length} records: ${t.entries.filter((e) => e.writerId === null).length} in the session stream, ${t.writerIds.length} writer stream${t.writerIds.length === 1 ? '' : 's'}`,
    ...gatewayLine(t),
    '',
  ];
}

/** For a gateway session: how many of its recorded calls went upstream rewritten. */
function gatewayLine(t: SessionTimeline): string[] {
  const opened = t.entries[0];
  if (opened?.type !== 'session.opened' || opened.payload.request.agent !== 'gateway') return [];
  const rewritten = rewrittenRequests(t);
  const calls = t.entries.filter((e) => e.writerId === null && e.type === 'messages.appended').length;
  const rebuilds = Math.max(0, ...rewritten.values());
  return [`recorded by the gateway: ${calls} call${calls === 1 ? '' : 's'}, ${rewritten.size} sent upstream rewritten onto ${rebuilds} rebuilt context${rebuilds === 1 ? '' : 's'}`];
}

/**
 * One readable line per record: stream, seq, time since the session opened, type, key facts; a gateway call that went
 * upstream rewritten says so (`rewritten`: from {@link rewrittenRequests}).
 */
export function timelineLine(entry: TimelineEntry, t: SessionTimeline, rewritten: ReadonlyMap<number, number> = new Map()): string {
  const lane = entry.writerId === null ? 'session' : `  ${shortWriterId(entry.writerId, t.sessionId)}`;
  const rebuild = entry.writerId === null ? rewritten.get(entry.seq) : undefined;
  const facts = recordFacts(entry, t.sessionId) + (rebuild === undefined ? '' : ` ⟵ sent rewritten onto rebuilt context ${rebuild}`);
  return `${lane.padEnd(10)} #${String(entry.seq).padEnd(4)} ${offset(entry.at, t.openedAt).padStart(9)}  ${entry.type.padEnd(21)}${facts === '' ? '' : ` ${facts}`}`.trimEnd();
}

/** One NDJSON line per record (`--json`); a gateway call sent rewritten carries `rewritten_onto` (the rebuild). */
export function timelineJson(entry: TimelineEntry, rewritten: ReadonlyMap<number, number> = new Map()): string {
  const { stream, seq, at, type, payload, msgId, writerId } = entry;
  const rebuild = writerId === null ? rewritten.get(seq) : undefined;
  return JSON.stringify({ stream, seq, at, type, writer_id: writerId, ...(msgId !== undefined ? { msgId } : {}), ...(rebuild !== undefined ? { rewritten_onto: rebuild } : {}), payload });
}
