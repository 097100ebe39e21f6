import { BLOBS_STREAM, COMMITS_STREAM, parseStream, sessionOfWriter, type AppendInput, type BlobAppend, type AppendResult, type EventLog, type GlobalReadOptions, type GlobalRecord, type ReadOptions, type StoredRecord } from '@baton/log-schema';
import type { HistoryStore } from '@baton/memory-store';
import { ClusterError } from './cluster-error.ts';
import { StreamCounts } from '../event-log/stream-counts.ts';
import type { StreamRecords } from './log-entry.ts';
import type { SessionLogWriter } from './session-log-writer.ts';

export interface ReplicatedEventLogOptions {
  /** The daemon's own event log (LMDB): every append goes there first. */
  readonly local: EventLog;
  /** The log writer of a session this daemon holds; undefined when it does not hold it. */
  readonly writerOf: (sessionId: string) => SessionLogWriter | undefined;
  /** A session's write was refused because a newer epoch took it over: the caller drops the session. */
  readonly onFenced: (sessionId: string, err: ClusterError) => void;
  /** The history store a commit's file contents are read from (they are stored there before the commit's intent). */
  readonly history?: HistoryStore;
}

/**
 * The session a record batch belongs to: its session stream, one of its writers' streams (`<sid>-w<n>`), the
 * memory-commit journal entry of one of its writers, or of a commit no writer made of its own files only (the
 * checkpoint it inherited from the session it continues). Null for anything else (a commit of project files,
 * another stream); `baton memory restore` runs with no daemon and never appends here.
 */
export function sessionOfAppend(stream: string, records: readonly AppendInput[]): string | null {
  const kind = parseStream(stream);
  if (kind === null) return null;
  switch (kind.kind) {
    case 'session':
      return kind.sessionId;
    case 'writer':
      return sessionOfWriter(kind.writerId);
    case 'commits': {
      const payload = records[0]?.payload as { writerId?: unknown; files?: readonly { rel?: unknown }[] } | undefined;
      if (typeof payload?.writerId === 'string') return sessionOfWriter(payload.writerId);
      const owners = new Set((payload?.files ?? []).map((f) => (typeof f.rel === 'string' ? /^sessions\/([^/]+)\//.exec(f.rel)?.[1] : undefined)));
      const [only] = owners;
      return owners.size === 1 && only !== undefined ? only : null;
    }
    case 'handoffs':
      return null;
  }
}

/**
 * Durability `replicated`: an `EventLog` whose appends of a held session resolve only once the local log has them
 * and the session's replicated log has them too. Records go to the local log first (which fixes their seqs), then,
 * in that same order, to the session's `SessionLogWriter` as one batch per append (`b`: the stream's seq before it;
 * duplicates the local log dropped are not sent). One replicated write is in flight per session; a write that failed
 * (JetStream unavailable) is retried before the session's next one, and `catchUp` lets a request wait for that first.
 * A fenced write tells `onFenced` and rejects. Reads go to the local log.
 */
export class ReplicatedEventLog implements EventLog {
  readonly #o: ReplicatedEventLogOptions;
  readonly #chains = new Map<string, Promise<void>>();

  constructor(options: ReplicatedEventLogOptions) {
    this.#o = options;
  }

  append(stream: string, records: readonly AppendInput[]): Promise<AppendResult[]> {
    const local = this.#o.local.append(stream, records);
    const sessionId = sessionOfAppend(stream, records);
    if (sessionId === null) return local;
    // Continuations run in the order the local log resolves appends (its commit order), so batches queue in seq order.
    return local.then(async (results) => {
      const writer = this.#o.writerOf(sessionId);
      if (writer === undefined) return results;
      const fresh: AppendInput[] = [];
      let first = 0;
      results.forEach((r, i) => {
        if (r.duplicate) return;
        if (fresh.length === 0) first = r.seq;
        fresh.push(records[i] as AppendInput);
      });
      // Commit journal seqs differ from daemon to daemon (every session shares the stream): its entries carry none.
      const base = stream === COMMITS_STREAM ? 0 : first - 1;
      await this.#enqueue(sessionId, async () => {
        if (fresh.length === 0) return await writer.flush();
        // The contents go first, in the same entry: whoever reads the intent can also read the files.
        const blobs = stream === COMMITS_STREAM ? await this.#blobsOf(fresh) : [];
        await writer.write([...blobs, { s: stream, b: base, r: fresh }]);
      });
      return results;
    });
  }

  /**
   * Writes a session's local records the replicated log never had (`unreplicatedRecords`) as the first batch of this
   * daemon's epoch, before the session is served; later appends continue from their seqs.
   */
  seed(sessionId: string, parts: readonly StreamRecords[]): Promise<void> {
    const writer = this.#o.writerOf(sessionId);
    if (writer === undefined) return Promise.reject(new ClusterError('not_owner', `session ${sessionId} is not held by this daemon`, { sessionId }));
    return this.#enqueue(sessionId, () => (parts.length > 0 ? writer.write(parts) : writer.flush()));
  }

  /** Resolves once everything this daemon queued for `sessionId` is in the replicated log (retrying a failed write). */
  catchUp(sessionId: string): Promise<void> {
    const writer = this.#o.writerOf(sessionId);
    if (writer === undefined) return Promise.resolve();
    return this.#enqueue(sessionId, () => writer.flush());
  }

  #enqueue(sessionId: string, job: () => Promise<void>): Promise<void> {
    const run = (this.#chains.get(sessionId) ?? Promise.resolve()).then(job).catch((err: unknown) => {
      if (err instanceof ClusterError && err.code === 'fenced') this.#o.onFenced(sessionId, err);
      throw err;
    });
    const tail = run.catch(() => {});
    this.#chains.set(sessionId, tail);
    void tail.then(() => {
      // Nothing queued after this job: forget the chain (a writer of a later epoch starts a new one).
      if (this.#chains.get(sessionId) === tail) this.#chains.delete(sessionId);
    });
    return run;
  }

  /** The contents of the files named by the `commit.prepared` records among `records`, as one `BLOBS_STREAM` part. */
  async #blobsOf(records: readonly AppendInput[]): Promise<StreamRecords[]> {
    const history = this.#o.history;
    if (history === undefined) return [];
    const blobs: BlobAppend[] = [];
    for (const r of records) {
      if (r.type !== 'commit.prepared') continue;
      const files = (r.payload as { files?: { hash?: unknown }[] }).files ?? [];
      for (const f of files) {
        if (typeof f.hash !== 'string') continue;
        blobs.push({ type: 'blob', at: r.at, payload: { hash: f.hash, data: new Uint8Array(await history.get(f.hash)) } });
      }
    }
    return blobs.length > 0 ? [{ s: BLOBS_STREAM, b: 0, r: blobs }] : [];
  }

  read(stream: string, options?: ReadOptions): Iterable<StoredRecord> {
    return this.#o.local.read(stream, options);
  }

  lastSeq(stream: string): number {
    return this.#o.local.lastSeq(stream);
  }

  keySeq(stream: string, key: string): number | undefined {
    return this.#o.local.keySeq(stream, key);
  }

  streams(prefix?: string): Iterable<string> {
    return this.#o.local.streams(prefix);
  }

  streamCounts(): ReadonlyMap<string, number> {
    return this.#o.local.streamCounts?.() ?? StreamCounts.of(this.#o.local.streams()).snapshot();
  }

  close(): Promise<void> {
    return this.#o.local.close();
  }

  readGlobal(from?: number, options?: GlobalReadOptions): Iterable<GlobalRecord> {
    if (this.#o.local.readGlobal === undefined) return [];
    return this.#o.local.readGlobal(from, options);
  }

  lastGlobalSeq(): number {
    return this.#o.local.lastGlobalSeq?.() ?? 0;
  }

  async flushed(): Promise<void> {
    await this.#o.local.flushed?.();
    await Promise.all(this.#chains.values());
  }
}
