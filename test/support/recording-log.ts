import type { AppendInput, AppendResult, EventLog, GlobalReadOptions, GlobalRecord, ReadOptions, StoredRecord } from '@baton/log-schema';

/** One `append` call as the decorator saw it. */
export interface RecordedAppend {
  readonly stream: string;
  readonly types: readonly string[];
  /** Whether the call has resolved (its records are durable) or rejected. */
  settled: boolean;
  /** The appends still unsettled when this one was called. */
  readonly pendingAtCall: readonly RecordedAppend[];
}

/**
 * An `EventLog` decorator that delegates everything to a real log and remembers the seqs of every record read from
 * each stream, and every append call with what was still waiting to be made durable then: shows what the daemon
 * actually reads (e.g. that loading a session starts from its newest snapshot) and how it appends.
 */
export class RecordingLog implements EventLog {
  readonly #inner: EventLog;
  /** Seqs of the records `read` yielded, by stream, in the order they were read. */
  readonly readSeqs = new Map<string, number[]>();
  /** Every append call, in call order. */
  readonly appends: RecordedAppend[] = [];

  constructor(inner: EventLog) {
    this.#inner = inner;
  }

  /** Forgets what was read so far. */
  reset(): void {
    this.readSeqs.clear();
  }

  append(stream: string, records: readonly AppendInput[]): Promise<AppendResult[]> {
    const call: RecordedAppend = { stream, types: records.map((r) => r.type), settled: false, pendingAtCall: this.appends.filter((a) => !a.settled) };
    this.appends.push(call);
    const settle = (): void => {
      call.settled = true;
    };
    const result = this.#inner.append(stream, records);
    result.then(settle, settle);
    return result;
  }

  *read(stream: string, options?: ReadOptions): Iterable<StoredRecord> {
    let seqs = this.readSeqs.get(stream);
    if (seqs === undefined) {
      seqs = [];
      this.readSeqs.set(stream, seqs);
    }
    for (const record of this.#inner.read(stream, options)) {
      seqs.push(record.seq);
      yield record;
    }
  }

  lastSeq(stream: string): number {
    return this.#inner.lastSeq(stream);
  }

  keySeq(stream: string, key: string): number | undefined {
    return this.#inner.keySeq(stream, key);
  }

  streams(prefix?: string): Iterable<string> {
    return this.#inner.streams(prefix);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  readGlobal(from?: number, options?: GlobalReadOptions): Iterable<GlobalRecord> {
    if (this.#inner.readGlobal === undefined) throw new Error('the wrapped log has no global order');
    return this.#inner.readGlobal(from, options);
  }

  lastGlobalSeq(): number {
    return this.#inner.lastGlobalSeq?.() ?? 0;
  }

  flushed(): Promise<void> {
    return this.#inner.flushed?.() ?? Promise.resolve();
  }
}
