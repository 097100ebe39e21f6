/** One file of a commit: its path relative to the memory root and the hash of the committed content. */
export interface CommittedFile {
  readonly rel: string;
  readonly hash: string;
}

/**
 * What a commit records. `writerId` is null for commits no writer made: a restore of an earlier version, or the
 * checkpoint a new session inherits from the session it continues.
 */
export interface CommitRecord {
  readonly commitId: string;
  readonly writerId: string | null;
  readonly reason: 'writer' | 'restore' | 'inherited';
  readonly at: number;
  readonly files: readonly CommittedFile[];
}

export type CommitEntryType = 'commit.prepared' | 'commit.applied';

export interface CommitEntry {
  readonly type: CommitEntryType;
  readonly record: CommitRecord;
}

/**
 * The durable journal a commit is recorded in (the runtime backs it with an event-log stream). `append` resolves only
 * once the entry is durable; `entries` returns every entry in append order.
 */
export interface CommitJournal {
  append(type: CommitEntryType, record: CommitRecord): Promise<void>;
  entries(): Iterable<CommitEntry> | Promise<Iterable<CommitEntry>>;
}

/** An in-memory journal, for tests and tools that need no durability. */
export class MemoryCommitJournal implements CommitJournal {
  readonly #entries: CommitEntry[] = [];

  append(type: CommitEntryType, record: CommitRecord): Promise<void> {
    this.#entries.push({ type, record });
    return Promise.resolve();
  }

  entries(): Iterable<CommitEntry> {
    return [...this.#entries];
  }
}
