import type { LogEntry } from './log-entry.ts';
import { foldLogEntries, type LogHistory } from './log-history.ts';
import type { SessionEpochs } from './session-epochs.ts';
import type { SessionLog } from './session-log.ts';

/** A session this daemon holds: its epoch, where its takeover marker sits, and the next index it writes. */
export interface HeldSession {
  readonly sessionId: string;
  readonly daemonId: string;
  readonly epoch: number;
  /** The first index of this epoch: everything before it is the previous owners' history. */
  readonly markerIndex: number;
  /** Where this epoch's first batch goes (after the marker and its spares). */
  readonly nextIndex: number;
}


export type ClaimOutcome =
  /** `overtaken`: indexes the previous owner (still writing) took while the marker was being placed. */
  | ({ readonly claimed: true; readonly overtaken: number } & HeldSession)
  /** Another daemon holds the session at `epoch` (it won the race, or it is alive and `isStale` said so). */
  | { readonly claimed: false; readonly owner: string; readonly epoch: number };

export interface ClaimOptions {
  /** Whether the current owner may be taken to be dead (asked only when another daemon holds the newest epoch). */
  readonly isStale: (owner: string) => boolean | Promise<boolean>;
  /** Wall-clock time recorded in the claim (for operators only; nothing is judged by it). */
  readonly at: number;
}

/**
 * Claims a session for `daemonId`: reads its newest epoch n; unless another live daemon holds it, creates epoch n+1
 * (create-if-absent: exactly one claimant wins), then writes a takeover marker right after the newest entry of its
 * log. Once the marker is stored, no write of an older epoch can land after it: an older owner writes its indexes in
 * order, and its next one is taken, refused, and shows a newer epoch. Indexes are only ever created one past the
 * newest, so the log never has holes.
 *
 * A previous owner still writing (judged stale but alive: slow, or cut off from the KV bucket only) may take the
 * index the marker aimed at: its entry is older, so it is history, and the marker aims at the next index at once.
 * Such an owner could keep the marker out for as long as it writes one entry per round trip; a daemon stops writing
 * once its own heartbeat is older than most of the lease, before anyone may judge it stale, so this ends.
 */
export async function claimSession(epochs: SessionEpochs, log: SessionLog, daemonId: string, options: ClaimOptions): Promise<ClaimOutcome> {
  const sid = log.sessionId;
  const current = await epochs.latest(sid);
  if (current !== null && current.daemon !== daemonId && !(await options.isStale(current.daemon))) {
    return { claimed: false, owner: current.daemon, epoch: current.epoch };
  }
  const epoch = (current?.epoch ?? 0) + 1;
  if (!(await epochs.create(sid, epoch, daemonId, options.at))) {
    const winner = await epochs.latest(sid);
    return { claimed: false, owner: winner?.daemon ?? 'unknown', epoch: winner?.epoch ?? epoch };
  }
  await epochs.hint(sid, epoch, daemonId);
  const marker: LogEntry = { k: 'marker', e: epoch, d: daemonId };
  const first = await markerTarget(log, epoch);
  if (typeof first !== 'number') return { claimed: false, owner: first.d, epoch: first.e };
  for (let index = first; ; index++) {
    const put = await log.put(index, marker);
    if (put.verdict === 'stored' || put.verdict === 'mine') return { claimed: true, overtaken: index - first, sessionId: sid, daemonId, epoch, markerIndex: index, nextIndex: index + 1 };
    if (put.verdict === 'fenced') return { claimed: false, owner: put.found.d, epoch: put.found.e };
    // 'behind': an older epoch holds `index`, so no newer one holds anything below it (an older owner could not have
    // written past a newer marker, nor placed its own after one): the next index is where the marker goes.
  }
}

/**
 * The history a new owner takes over: every entry below its marker, folded (`ClusterError('interleaved' | 'gap')`
 * when the log breaks the single-owner rules). Nothing can be written below the marker any more, so this is final.
 */
export async function readTakenHistory(log: SessionLog, held: HeldSession): Promise<LogHistory> {
  return foldLogEntries(await log.read(1, held.markerIndex - 1));
}

/**
 * Where a marker of `epoch` goes: right after the newest entry — unless that entry is of a newer epoch (a rival
 * claimed after this daemon and placed its marker first): then that entry, and this claim is lost. Without this check
 * a claimant that read the index after a newer rival's marker would write its own older marker behind it, and two
 * epochs would interleave. Entries after a marker are only ever of its epoch or newer ones, so the newest entry's epoch
 * is the newest epoch written.
 */
async function markerTarget(log: SessionLog, epoch: number): Promise<number | LogEntry> {
  const last = await log.last();
  if (last === null) return 1;
  if (last.entry.e > epoch) return last.entry;
  return last.index + 1;
}
