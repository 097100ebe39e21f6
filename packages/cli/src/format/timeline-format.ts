import { type SessionTimeline, type TimelineEntry } from '@baton/runtime';
import { groupDigits, offset, shortWriterId } from './numbers.ts';
import { recordFacts } from './record-facts.ts';

/** Header lines of a readable timeline. */
export function timelineHeader(t: SessionTimeline): string[] {
  const input = t.setup.input;
  return [
    `session ${t.sessionId} · project ${t.setup.projectId} · model ${t.setup.model}`,
    `opened ${new Date(t.openedAt).toISOString()} · usable window ${groupDigits(input.usableWindow)} · thresholds ${input.thresholds.map(groupDigits).join(' · ') || 'none'}`,
    `${t.entries.length} records: ${t.entries.filter((e) => e.writerId === null).length} in the session stream, ${t.writerIds.length} writer stream${t.writerIds.length === 1 ? '' : 's'}`,
    '',
  ];
}

/** One readable line per record: stream, seq, time since the session opened, type, key facts. */
export function timelineLine(entry: TimelineEntry, t: SessionTimeline): string {
  const lane = entry.writerId === null ? 'session' : `  ${shortWriterId(entry.writerId, t.sessionId)}`;
  const facts = recordFacts(entry, t.sessionId);
  return `${lane.padEnd(10)} #${String(entry.seq).padEnd(4)} ${offset(entry.at, t.openedAt).padStart(9)}  ${entry.type.padEnd(21)}${facts === '' ? '' : ` ${facts}`}`.trimEnd();
}

/** One NDJSON line per record (`--json`). */
export function timelineJson(entry: TimelineEntry): string {
  const { stream, seq, at, type, payload, msgId, writerId } = entry;
  return JSON.stringify({ stream, seq, at, type, writer_id: writerId, ...(msgId !== undefined ? { msgId } : {}), payload });
}
