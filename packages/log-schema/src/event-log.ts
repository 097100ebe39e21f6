/**
 * The event log port. Streams are append-only sequences of records keyed by (stream, seq), seq starting at 1.
 * Adapters: `LmdbEventLog` (durable) and `MemoryEventLog` (tests, embedded demos); both pass one contract suite.
 */

/** What is stored for every record (encoded with msgpackr in LMDB). */
export interface LogRecord {
  /** Record format version. */
  readonly v: 1;
  readonly type: string;
  /** Milliseconds since the epoch, supplied by the caller (injected clock). */
  readonly at: number;
  readonly payload: unknown;
  /** Idempotency key: a second append with the same (stream, msgId) is a duplicate and stores nothing. */
  readonly msgId?: string;
}

export interface StoredRecord extends LogRecord {
  readonly stream: string;
  readonly seq: number;
}

export interface AppendInput {
  readonly type: string;
  readonly at: number;
  readonly payload: unknown;
  readonly msgId?: string;
  /**
   * Lookup keys the record registers in its stream (e.g. the ids of the messages it carries), answered by `keySeq`.
   * Not part of the stored record; a duplicate (by msgId) registers nothing; a later record registering the same key
   * takes it over (e.g. `snapshot`: the newest snapshot).
   */
  readonly keys?: readonly string[];
}

export interface AppendResult {
  /** Sequence of the stored record (of the original record for a duplicate). */
  readonly seq: number;
  readonly duplicate: boolean;
}

export interface ReadOptions {
  /** First sequence to read (inclusive). Default 1. */
  readonly from?: number;
  /** Last sequence to read (inclusive). Default: the end. */
  readonly to?: number;
  readonly limit?: number;
}

export interface GlobalRecord extends StoredRecord {
  /** Position in the log-wide commit order, starting at 1. */
  readonly globalSeq: number;
}

export interface GlobalReadOptions {
  readonly limit?: number;
}

export interface EventLog {
  /**
   * Appends records to one stream in order. Resolves only after the transaction holding them is durable
   * (group commit: appends issued in the same event-loop turn share one transaction). Duplicates by msgId
   * (within the call or against earlier appends) store nothing and report the original seq.
   */
  append(stream: string, records: readonly AppendInput[]): Promise<AppendResult[]>;
  /** Ordered read of a stream range (for replay). */
  read(stream: string, options?: ReadOptions): Iterable<StoredRecord>;
  /**
   * Highest sequence of the stream, 0 when empty. Counts committed records only (those `read` can return); appends
   * still waiting for their transaction are not included.
   */
  lastSeq(stream: string): number;
  /**
   * The seq of the committed record of `stream` that last registered `key` (see `AppendInput.keys`), or undefined.
   * Appends still waiting for their transaction are not seen: callers that check before appending serialise their
   * appends per stream.
   */
  keySeq(stream: string, key: string): number | undefined;
  /** Stream names starting with `prefix` (all when omitted), in key order. */
  streams(prefix?: string): Iterable<string>;
  /**
   * Optional: how many streams there are per kind — the name up to and including its first `/` (`session/`,
   * `writer/`), or the whole name when it has none — known without walking them.
   */
  streamCounts?(): ReadonlyMap<string, number>;
  /** Waits for all pending appends and releases resources. */
  close(): Promise<void>;
  /** Optional: records of all streams in commit order, from global sequence `from` (default 1). */
  readGlobal?(from?: number, options?: GlobalReadOptions): Iterable<GlobalRecord>;
  /** Optional: highest committed global sequence, 0 when empty. */
  lastGlobalSeq?(): number;
  /** Optional: resolves once every append issued so far has settled. */
  flushed?(): Promise<void>;
  /**
   * Optional: removes every record of `stream` with its message ids and lookup keys, so the stream starts again at
   * seq 1 (cluster mode: a local copy of a session that is not a prefix of its replicated log is replaced). The
   * caller appends nothing to the stream meanwhile.
   */
  removeStream?(stream: string): Promise<void>;
}
