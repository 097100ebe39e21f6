import { ClusterError } from './cluster-error.ts';
import { joinParts, type LogEntry, type PartEntry, type StreamRecords } from './log-entry.ts';

/** An entry with the index its subject names. */
export interface IndexedEntry {
  readonly index: number;
  readonly entry: LogEntry;
}

/** One batch of records, complete, as its owner wrote it. */
export interface ReplicatedBatch {
  /** Index of the batch's (last) entry. */
  readonly index: number;
  readonly epoch: number;
  readonly daemon: string;
  readonly streams: readonly StreamRecords[];
}

export interface TakeoverMarker {
  readonly index: number;
  readonly epoch: number;
  readonly daemon: string;
}

/** Where a fold stands: the last index folded, and the newest epoch and its owner (from its marker). */
export interface LogPosition {
  readonly index: number;
  readonly epoch: number;
  readonly owner: string | null;
}

export interface LogHistory extends LogPosition {
  readonly batches: readonly ReplicatedBatch[];
  readonly markers: readonly TakeoverMarker[];
  /** Pieces of a batch that was never finished: cut off by a takeover, or still being written at the end. */
  readonly orphanedParts: number;
}

export const LOG_START: LogPosition = { index: 0, epoch: 0, owner: null };

/**
 * Folds a session's replicated log, in index order, into the batches it holds. The rules that make the log a single
 * owner's history at every point:
 * - indexes are contiguous (a missing one is `gap`);
 * - an epoch starts with its owner's takeover marker, and epochs only grow: an entry of an older epoch after a newer
 *   marker, a second marker of an epoch, or an entry of a newer epoch without its marker is `interleaved`;
 * - the pieces of a large batch are consecutive; pieces left unfinished by a takeover are dropped (their batch was
 *   never acknowledged: an append is acknowledged only once every piece is stored).
 * Pure. `from` continues an earlier fold (its result's position).
 */
export function foldLogEntries(entries: Iterable<IndexedEntry>, from: LogPosition = LOG_START): LogHistory {
  let { index, epoch, owner } = from;
  const batches: ReplicatedBatch[] = [];
  const markers: TakeoverMarker[] = [];
  let parts: PartEntry[] = [];
  let orphaned = 0;
  for (const { index: at, entry } of entries) {
    if (at !== index + 1) throw new ClusterError('gap', `replicated log: index ${index + 1} is missing (next is ${at})`, { expected: index + 1, found: at });
    index = at;
    if (entry.k === 'marker') {
      if (entry.e <= epoch) {
        throw new ClusterError('interleaved', `replicated log: marker of epoch ${entry.e} at index ${at} after epoch ${epoch}`, { index: at, epoch: entry.e, after: epoch });
      }
      orphaned += parts.length;
      parts = [];
      epoch = entry.e;
      owner = entry.d;
      markers.push({ index: at, epoch: entry.e, daemon: entry.d });
      continue;
    }
    if (entry.e !== epoch || entry.d !== owner) {
      throw new ClusterError('interleaved', `replicated log: a ${entry.k} of epoch ${entry.e} (${entry.d}) at index ${at} in epoch ${epoch} (${String(owner)})`, {
        index: at,
        epoch: entry.e,
        daemon: entry.d,
        current: epoch,
      });
    }
    if (entry.k === 'batch') {
      if (parts.length > 0) throw new ClusterError('bad_entry', `replicated log: a batch at index ${at} inside an unfinished split batch`, { index: at });
      batches.push({ index: at, epoch, daemon: entry.d, streams: entry.a });
      continue;
    }
    if (entry.p !== parts.length || (parts.length > 0 && parts[0]?.n !== entry.n)) {
      throw new ClusterError('bad_entry', `replicated log: piece ${entry.p}/${entry.n} at index ${at} out of order`, { index: at });
    }
    parts.push(entry);
    if (parts.length === entry.n) {
      const batch = joinParts(parts, `replicated log index ${at}`);
      batches.push({ index: at, epoch, daemon: entry.d, streams: batch.a });
      parts = [];
    }
  }
  return { index, epoch, owner, batches, markers, orphanedParts: orphaned + parts.length };
}
