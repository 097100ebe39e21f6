import { SNAPSHOT_KEY, sessionStream, sessionWritersPrefix, type AppendInput, type EventLog, type StoredRecord } from '@baton/log-schema';
import { messageKey } from '../daemon/message-key.ts';
import type { StreamRecords } from './log-entry.ts';
import { sessionOfWriter } from './replicated-event-log.ts';

/**
 * The lookup keys a stored record registered when it was appended (they are not stored with it): a
 * `messages.appended` its messages' keys, a `snapshot` the snapshot key. Every other record registers none.
 */
function keysOf(r: StoredRecord): string[] | undefined {
  if (r.type === 'snapshot') return [SNAPSHOT_KEY];
  if (r.type !== 'messages.appended') return undefined;
  const messages = (r.payload as { messages?: { id?: unknown }[] }).messages ?? [];
  return messages.flatMap((m) => (typeof m.id === 'string' ? [messageKey(m.id)] : []));
}

function inputOf(r: StoredRecord): AppendInput {
  const keys = keysOf(r);
  return { type: r.type, at: r.at, payload: r.payload, ...(r.msgId !== undefined ? { msgId: r.msgId } : {}), ...(keys !== undefined ? { keys } : {}) };
}

/**
 * Every local record of a session (its own stream and its writers'), as the parts of one batch from seq 0: what a
 * daemon writes to a session's replicated log when it claims, with durability `replicated`, a session whose records
 * the replicated log never had (it was written before this daemon ran in that mode).
 */
export function unreplicatedRecords(log: EventLog, sessionId: string): StreamRecords[] {
  const streams = [sessionStream(sessionId), ...[...log.streams(sessionWritersPrefix(sessionId))].filter((s) => sessionOfWriter(s.slice('writer/'.length)) === sessionId)];
  const parts: StreamRecords[] = [];
  for (const s of streams) {
    const r = [...log.read(s)].map(inputOf);
    if (r.length > 0) parts.push({ s, b: 0, r });
  }
  return parts;
}
