import { DeliverPolicy } from '@nats-io/jetstream';
import { ClusterError } from './cluster-error.ts';
import type { ClusterStore } from './cluster-store.ts';
import { fenceVerdict, type FenceVerdict } from './fence-verdict.ts';
import { isWrongLastSequence } from './jetstream-errors.ts';
import { decodeEntry, encodeEntry, type LogEntry } from './log-entry.ts';
import type { IndexedEntry } from './log-history.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';

/** What writing one entry at an index came to. `found` is the entry that was there when the write was refused. */
export type PutOutcome = { readonly verdict: 'stored' } | { readonly verdict: FenceVerdict; readonly found: LogEntry };

/**
 * One session's replicated log in the log stream: entry `i` is the only message on `<prefix>.log.<sid>.<i>`.
 * Writes use expected subject sequence 0 (the subject must be empty: safe on replicated streams of every server
 * version, unlike an expected non-zero sequence) and the message id `<sid>-<i>-<epoch>` (a retry after a lost
 * acknowledgement is a duplicate, not a second record). Reads of single entries go to the stream's leader.
 */
export class SessionLog {
  readonly sessionId: string;
  readonly #store: ClusterStore;
  readonly #retry: RetryPolicy;

  constructor(store: ClusterStore, sessionId: string, retry: RetryPolicy = DEFAULT_RETRY) {
    this.#store = store;
    this.sessionId = sessionId;
    this.#retry = retry;
  }

  /** The newest entry (the highest index: indexes are created in order), or null when the session has none. */
  async last(): Promise<IndexedEntry | null> {
    const names = this.#store.names;
    const msg = await withRetry(`last entry of ${this.sessionId}`, () => this.#store.jsm.streams.getMessage(names.logStream, { last_by_subj: names.sessionFilter(this.sessionId) }), this.#retry);
    if (msg === null) return null;
    const index = names.indexOf(msg.subject);
    if (!Number.isSafeInteger(index)) throw new ClusterError('bad_entry', `log subject ${msg.subject} names no index`, { subject: msg.subject });
    return { index, entry: decodeEntry(msg.data, msg.subject) };
  }

  /** The highest index written, 0 when the session has no entry. */
  async lastIndex(): Promise<number> {
    return (await this.last())?.index ?? 0;
  }

  /** The entry at `index`, or null when there is none. */
  async entryAt(index: number): Promise<LogEntry | null> {
    const names = this.#store.names;
    const subject = names.logSubject(this.sessionId, index);
    const msg = await withRetry(`entry ${subject}`, () => this.#store.jsm.streams.getMessage(names.logStream, { last_by_subj: subject }), this.#retry);
    return msg === null ? null : decodeEntry(msg.data, subject);
  }

  /**
   * Writes `entry` (of `epoch`, by `daemon`) at `index` unless the subject already holds one; then the entry found
   * there says what happened (`FenceVerdict`). Transient failures are retried with the same message id.
   */
  async put(index: number, entry: LogEntry): Promise<PutOutcome> {
    const names = this.#store.names;
    const subject = names.logSubject(this.sessionId, index);
    const msgID = names.msgId(this.sessionId, index, entry.e);
    const data = encodeEntry(entry);
    try {
      await withRetry(`write ${subject}`, () => this.#store.js.publish(subject, data, { msgID, expect: { lastSubjectSequence: 0 } }), this.#retry);
      return { verdict: 'stored' };
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
    }
    const found = await this.entryAt(index);
    if (found === null) throw new ClusterError('gap', `${subject} refused a write but holds no entry`, { subject });
    return { verdict: fenceVerdict({ epoch: entry.e, daemon: entry.d }, { epoch: found.e, daemon: found.d }, index), found };
  }

  /**
   * Entries `from`..`to` in index order (`to` default: the last index when the read starts), through an ordered
   * consumer filtered on the session's subjects (one pass over the stream, no request per entry).
   */
  async read(from = 1, to?: number): Promise<IndexedEntry[]> {
    const names = this.#store.names;
    const last = to ?? (await this.lastIndex());
    if (last < from) return [];
    const startSeq = from > 1 ? await this.#seqOf(from) : null;
    const consumer = await withRetry(`read ${this.sessionId}`, () =>
      this.#store.js.consumers.get(names.logStream, {
        filter_subjects: names.sessionFilter(this.sessionId),
        ...(startSeq === null ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq }),
      }),
    this.#retry);
    const out: IndexedEntry[] = [];
    const messages = await consumer.consume({ max_messages: 512 });
    try {
      for await (const m of messages) {
        const index = names.indexOf(m.subject);
        if (index >= from && index <= last) out.push({ index, entry: decodeEntry(m.data, m.subject) });
        if (index >= last || m.info.pending === 0) break;
      }
    } finally {
      messages.stop();
    }
    out.sort((a, b) => a.index - b.index);
    return out;
  }

  /** The stream sequence of the entry at `index` (where an incremental read starts). */
  async #seqOf(index: number): Promise<number> {
    const names = this.#store.names;
    const subject = names.logSubject(this.sessionId, index);
    const msg = await withRetry(`entry ${subject}`, () => this.#store.jsm.streams.getMessage(names.logStream, { last_by_subj: subject }), this.#retry);
    if (msg === null) throw new ClusterError('gap', `${subject} holds no entry`, { subject });
    return msg.seq;
  }
}
