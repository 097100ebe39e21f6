import type { AppendInput, AppendResult } from '@baton/log-schema';
import { asBinary } from 'lmdb';
import type { LogDatabases } from './lmdb-databases.ts';
import type { RecordKey } from './lmdb-reads.ts';

/** One `append` call waiting for its transaction: its records, validated and encoded, and how to settle it. */
export interface PendingAppend {
  readonly stream: string;
  readonly inputs: readonly AppendInput[];
  readonly encoded: readonly Uint8Array[];
  readonly resolve: (results: AppendResult[]) => void;
  readonly reject: (error: unknown) => void;
}

/** What writing a batch put into the transaction: each append's results, the streams' new heads, the global tail. */
export interface BatchWrite {
  readonly results: AppendResult[][];
  readonly newHeads: Map<string, number>;
  readonly globalSeq: number;
  /** Whether any record was written (a batch of duplicates only writes nothing). */
  readonly wrote: boolean;
}

const EMPTY_RESULTS: readonly AppendResult[] = Object.freeze([]);

/**
 * Puts the records of every append of `batch`, in call order, inside the write transaction that is running: sequence
 * numbers follow each stream's committed head (`committedHead`) and the batch itself, a message id seen before (in
 * the log or earlier in the batch) is answered with its original seq and stores nothing, and every record registers
 * its lookup keys and its global seq after `globalSeq`.
 */
export function writeBatch(dbs: LogDatabases, batch: readonly PendingAppend[], committedHead: (stream: string) => number, globalSeq: number): BatchWrite {
  const newHeads = new Map<string, number>();
  const results = new Array<AppendResult[]>(batch.length);
  let wrote = false;
  const batchMsgIds = new Map<string, Map<string, number>>();
  for (let b = 0; b < batch.length; b++) {
    const { stream, inputs, encoded } = batch[b] as PendingAppend;
    if (inputs.length === 0) {
      results[b] = EMPTY_RESULTS as AppendResult[];
      continue;
    }
    let head = newHeads.get(stream) ?? committedHead(stream);
    const out = new Array<AppendResult>(inputs.length);
    for (let i = 0; i < inputs.length; i++) {
      const msgId = (inputs[i] as AppendInput).msgId;
      if (msgId !== undefined) {
        let seen = batchMsgIds.get(stream);
        const original = seen?.get(msgId) ?? dbs.msgIds.get([stream, msgId]);
        if (original !== undefined) {
          out[i] = { seq: original, duplicate: true };
          continue;
        }
        head += 1;
        if (seen === undefined) batchMsgIds.set(stream, (seen = new Map<string, number>()));
        seen.set(msgId, head);
        dbs.msgIds.putSync([stream, msgId], head);
      } else {
        head += 1;
      }
      for (const lookup of (inputs[i] as AppendInput).keys ?? []) dbs.keys.putSync([stream, lookup], head);
      const key: RecordKey = [stream, head];
      dbs.records.putSync(key, asBinary(encoded[i] as Uint8Array));
      dbs.global.putSync(++globalSeq, key);
      wrote = true;
      out[i] = { seq: head, duplicate: false };
    }
    results[b] = out;
    newHeads.set(stream, head);
  }
  return { results, newHeads, globalSeq, wrote };
}
