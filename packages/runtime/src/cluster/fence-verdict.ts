import { ClusterError } from './cluster-error.ts';

/**
 * What a refused write means. A write at index i is refused (JetStream error 10071, "wrong last sequence") when the
 * subject already holds a record; the record found there decides:
 * - `mine`: it is this very write (an earlier attempt succeeded and its acknowledgement was lost);
 * - `fenced`: a newer epoch wrote there: another daemon took the session over, this one must drop it;
 * - `behind`: an older epoch wrote there: the previous owner's last write landed before this daemon's takeover marker
 *   (only possible while placing the marker); it is part of the history, and the marker goes to the next index.
 */
export type FenceVerdict = 'mine' | 'fenced' | 'behind';

export function fenceVerdict(mine: { readonly epoch: number; readonly daemon: string }, found: { readonly epoch: number; readonly daemon: string }, index: number): FenceVerdict {
  if (found.epoch > mine.epoch) return 'fenced';
  if (found.epoch < mine.epoch) return 'behind';
  // One epoch has exactly one owner (its KV key is created once): the same epoch by another daemon is a broken store.
  if (found.daemon !== mine.daemon) {
    throw new ClusterError('interleaved', `index ${index} holds epoch ${found.epoch} of ${found.daemon}, claimed by ${mine.daemon}`, { index, epoch: found.epoch, daemon: found.daemon });
  }
  return 'mine';
}
