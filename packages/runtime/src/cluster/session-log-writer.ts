import { ClusterError } from './cluster-error.ts';
import type { ClusterStore } from './cluster-store.ts';
import { entriesOf, type LogEntry, type StreamRecords } from './log-entry.ts';
import type { HeldSession } from './session-claim.ts';
import type { SessionLog } from './session-log.ts';

/**
 * Writes a held session's batches after its marker, one entry at a time and in order (the caller keeps one call in
 * flight per session). A refused write that finds a newer epoch throws `ClusterError('fenced')`: the session was
 * taken over and this daemon must not write for it again (every later call throws the same). An entry that could not
 * be written (JetStream unavailable) stays queued and is written first by the next call, at the same index with the
 * same message id, so the log keeps the local order and has no hole.
 */
export class SessionLogWriter {
  readonly held: HeldSession;
  readonly #log: SessionLog;
  readonly #maxEntryBytes: number;
  readonly #pending: LogEntry[] = [];
  #next: number;
  #fenced: ClusterError | null = null;

  constructor(store: ClusterStore, log: SessionLog, held: HeldSession) {
    this.held = held;
    this.#log = log;
    this.#maxEntryBytes = store.maxEntryBytes;
    this.#next = held.nextIndex;
  }

  /** The index the next entry goes to. */
  get nextIndex(): number {
    return this.#next;
  }

  /** Entries queued but not stored yet (left by a write JetStream did not take). */
  get pendingEntries(): number {
    return this.#pending.length;
  }

  get fenced(): ClusterError | null {
    return this.#fenced;
  }

  /** Writes one batch (split into pieces when it is too large for one message); resolves once every piece is stored. */
  async write(records: readonly StreamRecords[]): Promise<void> {
    if (this.#fenced !== null) throw this.#fenced;
    const { epoch, daemonId } = this.held;
    this.#pending.push(...entriesOf({ k: 'batch', e: epoch, d: daemonId, a: records }, this.#maxEntryBytes));
    await this.flush();
  }

  /** Writes the queued entries, oldest first; resolves once none is left. */
  async flush(): Promise<void> {
    const { sessionId, epoch } = this.held;
    for (let entry = this.#pending[0]; entry !== undefined; entry = this.#pending[0]) {
      if (this.#fenced !== null) throw this.#fenced;
      const put = await this.#log.put(this.#next, entry);
      if (put.verdict === 'fenced') {
        this.#fenced = new ClusterError('fenced', `session ${sessionId}: epoch ${put.found.e} of ${put.found.d} wrote at index ${this.#next}; epoch ${epoch} is over`, {
          sessionId,
          epoch: put.found.e,
          owner: put.found.d,
          index: this.#next,
        });
        throw this.#fenced;
      }
      if (put.verdict === 'behind') {
        // After this daemon's own marker no older epoch can write: the store broke the create-only rule.
        throw new ClusterError('interleaved', `session ${sessionId}: epoch ${put.found.e} wrote at index ${this.#next} after the marker of epoch ${epoch}`, { sessionId, index: this.#next });
      }
      this.#pending.shift();
      this.#next++;
    }
  }
}
