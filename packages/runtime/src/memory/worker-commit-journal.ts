import type { CommitEntry, CommitEntryType, CommitJournal, CommitRecord } from '@baton/memory-store';
import { COMMITS_STREAM, type AppendInput, type CommitAppend } from '@baton/log-schema';
import { commitMsgId } from './event-log-commit-journal.ts';

/**
 * The commit journal as seen from a worker thread: entries go to the main thread's event log (same records and
 * idempotency keys as `EventLogCommitJournal`). Reading is the main thread's job (history, recovery).
 */
export class WorkerCommitJournal implements CommitJournal {
  readonly #append: (stream: string, records: readonly AppendInput[]) => Promise<unknown>;

  constructor(append: (stream: string, records: readonly AppendInput[]) => Promise<unknown>) {
    this.#append = append;
  }

  async append(type: CommitEntryType, record: CommitRecord): Promise<void> {
    const entry: CommitAppend = { type, at: record.at, payload: { ...record, files: [...record.files] }, msgId: commitMsgId(type, record) };
    await this.#append(COMMITS_STREAM, [entry]);
  }

  entries(): Iterable<CommitEntry> {
    throw new Error('the commit journal is read on the main thread');
  }
}
