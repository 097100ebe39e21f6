import { messageKey, type EventLog } from '@baton/log-schema';
import type { Message } from '@baton/protocol';

/**
 * The messages of an append not seen before in `stream` and the lookup keys they register: a re-sent id is accepted
 * once, checked against the log (durable, not held in memory) and within the batch.
 */
export function newMessages(messages: readonly Message[], log: Pick<EventLog, 'keySeq'>, stream: string): { accepted: Message[]; keys: string[] } {
  const accepted: Message[] = [];
  const keys = new Set<string>();
  for (const m of messages) {
    const key = messageKey(m.id);
    if (keys.has(key) || log.keySeq(stream, key) !== undefined) continue;
    keys.add(key);
    accepted.push(m);
  }
  return { accepted, keys: [...keys] };
}
