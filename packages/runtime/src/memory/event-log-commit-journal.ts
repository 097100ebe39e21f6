import type { CommitEntry, CommitEntryType, CommitJournal, CommitRecord } from '@baton/memory-store';
import { commitLog, type CommitRecordSchemas, type EventLog, type StreamLog } from '@baton/log-schema';

/**
 * A commit journal on the event log: `commit.prepared` / `commit.applied` records in the `memory/commits` stream,
 * idempotent by `(type, commitId)` so a recovery that re-applies a commit never records it twice.
 */
export class EventLogCommitJournal implements CommitJournal {
  readonly #commits: StreamLog<CommitRecordSchemas>;

  constructor(log: EventLog) {
    this.#commits = commitLog(log);
  }

  async append(type: CommitEntryType, record: CommitRecord): Promise<void> {
    await this.#commits.append('', [{ type, at: record.at, payload: { ...record, files: [...record.files] }, msgId: commitMsgId(type, record) }]);
  }

  entries(): Iterable<CommitEntry> {
    const out: CommitEntry[] = [];
    for (const r of this.#commits.read('')) out.push({ type: r.type, record: r.payload });
    return out;
  }
}

/** The idempotency key of a journal entry. */
export function commitMsgId(type: CommitEntryType, record: CommitRecord): string {
  return `${type}:${record.commitId}`;
}
