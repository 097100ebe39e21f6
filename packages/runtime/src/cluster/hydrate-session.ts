import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import {
  BLOBS_STREAM,
  BLOB_RECORDS,
  COMMITS_STREAM,
  LogRecordError,
  checkAppendInputs,
  parseStream,
  sessionOfWriter,
  sessionStream,
  sessionWritersPrefix,
  type AppendInput,
  type EventLog,
} from '@baton/log-schema';
import { contentHash, writeFileAtomic, type HistoryStore } from '@baton/memory-store';
import { ClusterError } from './cluster-error.ts';
import type { LogHistory } from './log-history.ts';

/** What hydrating a session did to the local log. */
export interface HydrateReport {
  /** Records appended to the session's local streams. */
  readonly appended: number;
  /** Whether the local copy was kept (a prefix of the replicated history) or replaced. */
  readonly replaced: boolean;
  /** Streams the history holds records of (the session's own and its writers'). */
  readonly streams: number;
  /** Memory-commit journal entries of the session's writers offered to the local journal (it keeps each once). */
  readonly commits: number;
  /** The session's own memory files written from the history (the newest committed version of each). */
  readonly files: number;
  /**
   * The replicated log holds none of the session's records but this daemon's log does (written before it ran with
   * durability `replicated`): the local copy is kept and must be written to the replicated log before serving.
   */
  readonly unreplicated: boolean;
}

/** Where a new owner keeps memory-file contents and the live files (absent: the contents are not materialised). */
export interface HydrateFiles {
  readonly history: HistoryStore;
  readonly memoryRoot: string;
}

/** Records appended per local append call while hydrating. */
const CHUNK = 256;

/**
 * Brings the local event log's copy of a session up to the replicated history a new owner took over, before it
 * serves the session: each stream of the session (its own, its writers') gets the records it lacks, in order, with
 * their lookup keys, so the session loads (from its newest snapshot) and `replay --verify` re-folds it as on the
 * previous owner. A local copy that is not a prefix of the history (records the replicated log never acknowledged, or
 * another owner's since) is removed and rebuilt from the history — unless the history holds nothing of the session's
 * own stream: then the local copy is the only one, kept, and reported `unreplicated`. Commit journal entries of its writers are offered to
 * the shared journal, which keeps each one once (by message id). Throws `ClusterError('gap')` when the history skips
 * records of a stream, `ClusterError('bad_entry')` for a stream that is not the session's.
 */
export async function hydrateSession(log: EventLog, sessionId: string, history: LogHistory, files?: HydrateFiles): Promise<HydrateReport> {
  const wanted = new Map<string, AppendInput[]>();
  const commits: AppendInput[] = [];
  for (const batch of history.batches) {
    for (const part of batch.streams) {
      if (part.s === COMMITS_STREAM) {
        commits.push(...part.r);
        continue;
      }
      if (part.s === BLOBS_STREAM) {
        // Stored before the commit entries that name them are offered to the journal (a recovery may need them).
        if (files !== undefined) for (const blob of part.r) await storeBlob(files.history, blob, batch.index);
        continue;
      }
      if (!belongsTo(part.s, sessionId)) throw new ClusterError('bad_entry', `replicated log of ${sessionId} (index ${batch.index}) holds records of ${part.s}`, { sessionId, stream: part.s });
      const records = wanted.get(part.s) ?? [];
      if (part.b !== records.length) {
        throw new ClusterError('gap', `replicated log of ${sessionId}: ${part.s} continues after seq ${part.b} at index ${batch.index}, but the history holds ${records.length}`, {
          sessionId,
          stream: part.s,
          index: batch.index,
        });
      }
      records.push(...part.r);
      wanted.set(part.s, records);
    }
  }
  const local = [sessionStream(sessionId), ...log.streams(sessionWritersPrefix(sessionId))].filter((s) => belongsTo(s, sessionId) && log.lastSeq(s) > 0);
  // A replicated session's first batch holds its opening: a history without the session's own stream never had it.
  const unreplicated = !wanted.has(sessionStream(sessionId)) && log.lastSeq(sessionStream(sessionId)) > 0;
  const keep = unreplicated || local.every((s) => isPrefix(log, s, wanted.get(s) ?? []));
  if (!keep) {
    if (log.removeStream === undefined) throw new ClusterError('gap', `the local copy of session ${sessionId} differs from its replicated log and this event log cannot replace it`, { sessionId });
    for (const s of local) await log.removeStream(s);
  }
  let appended = 0;
  for (const [stream, records] of wanted) {
    for (let have = log.lastSeq(stream); have < records.length; have = log.lastSeq(stream)) {
      const chunk = records.slice(have, have + CHUNK);
      const results = await log.append(stream, chunk);
      const stored = results.filter((r) => !r.duplicate).length;
      if (stored !== chunk.length || log.lastSeq(stream) !== have + chunk.length) {
        throw new ClusterError('gap', `hydrating ${stream}: ${chunk.length - stored} of ${chunk.length} records were taken as duplicates`, { sessionId, stream });
      }
      appended += stored;
    }
  }
  if (commits.length > 0) await log.append(COMMITS_STREAM, commits);
  const written = files === undefined ? 0 : await materialise(files, sessionId, commits);
  return { appended, replaced: !keep, streams: wanted.size, commits: commits.length, files: written, unreplicated };
}

async function storeBlob(history: HistoryStore, blob: AppendInput, index: number): Promise<void> {
  let payload: { hash: string; data: Uint8Array } | undefined;
  try {
    payload = checkAppendInputs(BLOB_RECORDS, BLOBS_STREAM, [blob])[0]?.payload;
  } catch (err) {
    if (!(err instanceof LogRecordError)) throw err;
  }
  if (payload === undefined || contentHash(payload.data) !== payload.hash) {
    throw new ClusterError('bad_entry', `replicated log index ${index}: a memory-file content that does not match its hash`, { index });
  }
  await history.put(payload.data);
}

/**
 * Writes the newest committed version of each of the session's own memory files (`sessions/<sid>/…`) its writers
 * committed. Project files (`MEMORY.md` and its spillovers) are left alone: every daemon of the cluster shares them
 * and brings its copy forward from the shared versions only, so an older version carried in this history must never
 * be written over a newer one. A version whose content is not in the history store (committed before contents were
 * replicated) is left alone.
 */
async function materialise(files: HydrateFiles, sessionId: string, commits: readonly AppendInput[]): Promise<number> {
  const own = normalize(`sessions/${sessionId}/`);
  const newest = new Map<string, string>();
  for (const c of commits) {
    if (c.type !== 'commit.applied') continue;
    for (const f of (c.payload as { files?: { rel?: unknown; hash?: unknown }[] }).files ?? []) {
      if (typeof f.rel === 'string' && typeof f.hash === 'string' && normalize(f.rel).startsWith(own)) newest.set(normalize(f.rel), f.hash);
    }
  }
  let written = 0;
  for (const [rel, hash] of newest) {
    if (!(await files.history.has(hash))) continue;
    const target = join(files.memoryRoot, rel);
    const live = await readFile(target).then((b) => contentHash(b), () => null);
    if (live === hash) continue;
    await mkdir(dirname(target), { recursive: true });
    await writeFileAtomic(target, await files.history.get(hash), `hydrate-${sessionId}`);
    written++;
  }
  return written;
}

function belongsTo(stream: string, sessionId: string): boolean {
  const kind = parseStream(stream);
  if (kind?.kind === 'session') return kind.sessionId === sessionId;
  if (kind?.kind === 'writer') return sessionOfWriter(kind.writerId) === sessionId;
  return false;
}

/** Whether the local stream's records are the first records of `records` (same type, time and message id). */
function isPrefix(log: EventLog, stream: string, records: readonly AppendInput[]): boolean {
  if (log.lastSeq(stream) > records.length) return false;
  let i = 0;
  for (const r of log.read(stream)) {
    const w = records[i++];
    if (w === undefined || w.type !== r.type || w.at !== r.at || w.msgId !== r.msgId) return false;
  }
  return true;
}
