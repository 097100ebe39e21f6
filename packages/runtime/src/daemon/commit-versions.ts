import { commitLog, type CommitRecordSchemas, type EventLog, type StreamLog } from '@baton/log-schema';

/**
 * How many committed versions each memory file has, kept up to date from the `memory/commits` stream: each query
 * reads only the commit records appended since the previous one, so `status` never re-reads the whole journal.
 */
export class CommitVersions {
  readonly #commits: StreamLog<CommitRecordSchemas>;
  readonly #counts = new Map<string, { count: number; last: string }>();
  #readUpTo = 0;

  constructor(log: EventLog) {
    this.#commits = commitLog(log);
  }

  /** Committed versions of the file at `rel` (relative to the memory root). */
  versions(rel: string): number {
    const last = this.#commits.lastSeq('');
    if (last > this.#readUpTo) {
      for (const record of this.#commits.read('', { from: this.#readUpTo + 1, to: last })) {
        if (record.type !== 'commit.applied') continue;
        for (const file of record.payload.files) {
          // The same commit applied twice (a recovery) is one version, as `baton memory log` counts them.
          const version = `${record.payload.commitId}:${file.hash}`;
          const seen = this.#counts.get(file.rel);
          if (seen?.last === version) continue;
          this.#counts.set(file.rel, { count: (seen?.count ?? 0) + 1, last: version });
        }
      }
      this.#readUpTo = last;
    }
    return this.#counts.get(rel)?.count ?? 0;
  }
}
