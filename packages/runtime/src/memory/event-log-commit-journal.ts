import type { CommitEntry, CommitEntryType, CommitJournal, CommitRecord } from '@baton/memory-store';
import type { EventLog } from '@baton/log-schema';

/** The stream that records every memory-file commit (intent and completion). */
export const COMMITS_STREAM = 'memory/commits';

/**
 * A commit journal on the event log: `commit.prepared` / `commit.applied` records in one stream, idempotent by
 * `(type, commitId)` so a recovery that re-applies a commit never records it twice.
 */
export class EventLogCommitJournal implements CommitJournal {
  readonly #log: EventLog;
  readonly #stream: string;

  constructor(log: EventLog, stream: string = COMMITS_STREAM) {
    this.#log = log;
    this.#stream = stream;
  }

  async append(type: CommitEntryType, record: CommitRecord): Promise<void> {
    await this.#log.append(this.#stream, [{ type, at: record.at, payload: record, msgId: `${type}:${record.commitId}` }]);
  }

  entries(): Iterable<CommitEntry> {
    const out: CommitEntry[] = [];
    for (const r of this.#log.read(this.#stream)) {
      if (r.type === 'commit.prepared' || r.type === 'commit.applied') out.push({ type: r.type, record: r.payload as CommitRecord });
    }
    return out;
  }
}
