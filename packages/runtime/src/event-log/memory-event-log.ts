/**
 * In-memory `EventLog` adapter for tests and the embedded demo. Same contract as `LmdbEventLog`: records are
 * encoded with the same msgpackr codec (so values round-trip identically), appends issued in the same turn are
 * committed together in a microtask, sequence numbers follow call order, duplicates by msgId store nothing and report
 * the original seq, and a failed commit (see `failNextCommit`) rejects every append of its batch and stores nothing.
 */
import {
  compareCodePoints,
  createRecordPackr,
  encodeInputs,
  toStoredRecord,
  validateStream,
} from './codec.ts';
import type {
  AppendInput,
  AppendResult,
  EventLog,
  GlobalReadOptions,
  GlobalRecord,
  ReadOptions,
  StoredRecord,
} from '@baton/log-schema';

interface StreamState {
  /** Encoded records; index = seq - 1. */
  readonly records: Uint8Array[];
  readonly msgIds: Map<string, number>;
  readonly keys: Map<string, number>;
}

interface PendingAppend {
  readonly stream: string;
  readonly inputs: readonly AppendInput[];
  readonly encoded: readonly Uint8Array[];
  readonly resolve: (results: AppendResult[]) => void;
  readonly reject: (error: unknown) => void;
}

/** A caught value as a rejection reason: the same object when it is an Error, else wrapped (kept as `cause`). */
const toError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error), { cause: error }));

export class MemoryEventLog implements EventLog {
  private readonly packr = createRecordPackr();
  private readonly state = new Map<string, StreamState>();
  private readonly global: [string, number][] = [];
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private closed = false;
  private pendingFailure: unknown = undefined;
  private hasPendingFailure = false;
  private sortedStreams: string[] | undefined;

  append(stream: string, records: readonly AppendInput[]): Promise<AppendResult[]> {
    if (this.closed) return Promise.reject(new Error('event log: closed'));
    let encoded: Uint8Array[];
    try {
      encoded = encodeInputs(this.packr, stream, records);
    } catch (error) {
      return Promise.reject(toError(error));
    }
    return new Promise<AppendResult[]>((resolve, reject) => {
      this.queue.push({ stream, inputs: records, encoded, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(this.flush);
      }
    });
  }

  read(stream: string, options: ReadOptions = {}): Iterable<StoredRecord> {
    this.assertOpen();
    validateStream(stream);
    const state = this.state;
    const packr = this.packr;
    return {
      *[Symbol.iterator]() {
        // like an LMDB range, the view is taken when iteration starts; records are decoded lazily
        const records = state.get(stream)?.records;
        if (records === undefined) return;
        const from = Math.max(1, Math.ceil(options.from ?? 1));
        const to = Math.min(records.length, Math.floor(options.to ?? records.length));
        const limit = options.limit ?? Infinity;
        for (let seq = from, n = 0; seq <= to && n < limit; seq++, n++) {
          yield toStoredRecord(packr.unpack(records[seq - 1] as Uint8Array), stream, seq);
        }
      },
    };
  }

  lastSeq(stream: string): number {
    this.assertOpen();
    return this.state.get(stream)?.records.length ?? 0;
  }

  keySeq(stream: string, key: string): number | undefined {
    this.assertOpen();
    return this.state.get(stream)?.keys.get(key);
  }

  *streams(prefix = ''): Iterable<string> {
    this.assertOpen();
    this.sortedStreams ??= [...this.state.keys()].sort(compareCodePoints);
    for (const stream of this.sortedStreams) if (stream.startsWith(prefix)) yield stream;
  }

  lastGlobalSeq(): number {
    this.assertOpen();
    return this.global.length;
  }

  *readGlobal(from = 1, options: GlobalReadOptions = {}): Iterable<GlobalRecord> {
    this.assertOpen();
    const end = this.global.length;
    const limit = options.limit ?? Infinity;
    for (let g = Math.max(1, Math.ceil(from)), n = 0; g <= end && n < limit; g++, n++) {
      const [stream, seq] = this.global[g - 1] as [string, number];
      const encoded = this.state.get(stream)?.records[seq - 1] as Uint8Array;
      const record = toStoredRecord(this.packr.unpack(encoded), stream, seq) as StoredRecord & { globalSeq: number };
      record.globalSeq = g;
      yield record;
    }
  }

  flushed(): Promise<void> {
    // commits run in a microtask queued before this one resolves
    return new Promise((resolve) => queueMicrotask(resolve));
  }

  /**
   * Test hook: the next commit fails with `error`, rejecting every append of that batch (nothing is stored), as a
   * failed LMDB transaction would.
   */
  failNextCommit(error: unknown = new Error('event log: simulated commit failure')): void {
    this.pendingFailure = error;
    this.hasPendingFailure = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flushed();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event log: closed');
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (this.hasPendingFailure) {
      const error = this.pendingFailure;
      this.hasPendingFailure = false;
      this.pendingFailure = undefined;
      for (const pending of batch) pending.reject(error);
      return;
    }
    for (const { stream, inputs, encoded, resolve } of batch) {
      const out = new Array<AppendResult>(inputs.length);
      let state = this.state.get(stream);
      for (let i = 0; i < inputs.length; i++) {
        const msgId = (inputs[i] as AppendInput).msgId;
        const original = msgId === undefined ? undefined : state?.msgIds.get(msgId);
        if (original !== undefined) {
          out[i] = { seq: original, duplicate: true };
          continue;
        }
        if (state === undefined) {
          state = { records: [], msgIds: new Map(), keys: new Map() };
          this.state.set(stream, state);
          this.sortedStreams = undefined;
        }
        state.records.push(encoded[i] as Uint8Array);
        const seq = state.records.length;
        if (msgId !== undefined) state.msgIds.set(msgId, seq);
        for (const key of (inputs[i] as AppendInput).keys ?? []) state.keys.set(key, seq);
        this.global.push([stream, seq]);
        out[i] = { seq, duplicate: false };
      }
      resolve(out);
    }
  };
}
