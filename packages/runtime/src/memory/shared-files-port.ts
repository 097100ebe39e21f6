/** One project file a writer commits to the files every daemon of a cluster shares. */
export interface SharedCommitFile {
  /** Path relative to the memory root (`projects/<project>/MEMORY.md`, or a spillover beside it). */
  readonly rel: string;
  /** The shared version the writer's staged copy started from (0: the cluster had none). */
  readonly base: number;
  readonly data: Uint8Array;
}

export interface SharedCommitRequest {
  readonly projectId: string;
  readonly writerId: string;
  readonly at: number;
  readonly files: readonly SharedCommitFile[];
}

export interface SharedCommitResult {
  /** Files committed (each now the cluster's newest version and this daemon's live copy), with their hashes. */
  readonly files: readonly { readonly rel: string; readonly hash: string }[];
  /** Files another commit changed since the writer staged them: left as they were. */
  readonly conflicts: readonly string[];
}

/**
 * The project memory files a cluster shares, as a writer sees them (a worker thread reaches them through the main
 * thread). `sync` brings this daemon's live copies up to the newest shared versions and returns the version each one
 * now is, by path; `commit` creates the next version of each file whose base is still the newest, and reports the rest
 * as conflicts.
 */
export interface SharedFilesPort {
  sync(projectId: string): Promise<Readonly<Record<string, number>>>;
  commit(request: SharedCommitRequest): Promise<SharedCommitResult>;
}
