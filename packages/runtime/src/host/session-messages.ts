import { SESSION_RECORDS, checkRecord, messageKey, sessionStream, type EventLog } from '@baton/log-schema';
import type { Message } from '@baton/protocol';

const isMain = (m: Message): boolean => m.agent_id === undefined || m.agent_id === 'main';

/** How many records are read at a time when the log is read backwards. */
const BACKWARDS_CHUNK = 256;

/**
 * Message bodies of a session, read from its log on the main thread for the worker that hosts it: a writer's fork
 * prefix, a rebuild's tail and the user's recent words. The hosts keep no bodies in memory.
 */
export class SessionMessages {
  readonly #log: EventLog;

  constructor(log: EventLog) {
    this.#log = log;
  }

  /** The bodies of `ids` in that order; an id the log does not hold is left out. */
  byIds(sessionId: string, ids: readonly string[]): Message[] {
    const stream = sessionStream(sessionId);
    const seqs = new Map<string, number>();
    for (const id of ids) {
      const seq = this.#log.keySeq(stream, messageKey(id));
      if (seq !== undefined) seqs.set(id, seq);
    }
    const byId = new Map<string, Message>();
    for (const seq of new Set(seqs.values())) {
      for (const raw of this.#log.read(stream, { from: seq, to: seq })) {
        const record = checkRecord(SESSION_RECORDS, raw);
        if (record.type === 'messages.appended') for (const m of record.payload.messages) if (seqs.get(m.id) === seq) byId.set(m.id, m);
      }
    }
    return ids.flatMap((id) => {
      const m = byId.get(id);
      return m === undefined ? [] : [m];
    });
  }

  /** The newest `limit` main-slice messages ever appended, oldest first (the stream is read backwards). */
  recentMain(sessionId: string, limit: number): Message[] {
    const stream = sessionStream(sessionId);
    const found: Message[][] = [];
    let count = 0;
    for (let to = this.#log.lastSeq(stream); to >= 1 && count < limit; to -= BACKWARDS_CHUNK) {
      const chunk = [...this.#log.read(stream, { from: Math.max(1, to - BACKWARDS_CHUNK + 1), to })].reverse();
      for (const raw of chunk) {
        if (raw.type !== 'messages.appended') continue;
        const record = checkRecord(SESSION_RECORDS, raw);
        if (record.type !== 'messages.appended') continue;
        const main = record.payload.messages.filter(isMain);
        found.push(main);
        count += main.length;
        if (count >= limit) break;
      }
    }
    return found.reverse().flat().slice(-limit);
  }
}
