import {
  BLOBS_STREAM,
  COMMITS_STREAM,
  commitLog,
  OWNER_KEY,
  SNAPSHOT_KEY,
  messageKey,
  ownerSetBy,
  sessionOfWriter,
  sessionStream,
  sessionWritersPrefix,
  type AppendInput,
  type BlobAppend,
  type EventLog,
  type StoredRecord,
} from '@baton/log-schema';
import type { HistoryStore } from '@baton/memory-store';
import type { StreamRecords } from './log-entry.ts';

/**
 * The lookup keys a stored record registered when it was appended (they are not stored with it): a
 * `messages.appended` its messages' keys, a `snapshot` the snapshot key, a record that sets the session's owner the
 * owner key. Every other record registers none.
 */
function keysOf(r: StoredRecord): string[] | undefined {
  if (r.type === 'snapshot') return [SNAPSHOT_KEY];
  if (ownerSetBy(r) !== undefined) return [OWNER_KEY];
  if (r.type !== 'messages.appended') return undefined;
  const messages = (r.payload as { messages?: { id?: unknown }[] }).messages ?? [];
  return messages.flatMap((m) => (typeof m.id === 'string' ? [messageKey(m.id)] : []));
}

function inputOf(r: StoredRecord): AppendInput {
  const keys = keysOf(r);
  return { type: r.type, at: r.at, payload: r.payload, ...(r.msgId !== undefined ? { msgId: r.msgId } : {}), ...(keys !== undefined ? { keys } : {}) };
}

/**
 * Every local record of a session (its own stream and its writers'), as the parts of one batch from seq 0: what a
 * daemon writes to a session's replicated log when it claims, with durability `replicated`, a session whose records
 * the replicated log never had (it was written before this daemon ran in that mode). With `history`, the memory-commit
 * journal entries of the session's writers go too, after the contents of the files they name (as a commit made in
 * replicated mode carries them), so a later owner has the session's checkpoint and notes and their versions.
 */
export async function unreplicatedRecords(log: EventLog, sessionId: string, history?: HistoryStore): Promise<StreamRecords[]> {
  const streams = [sessionStream(sessionId), ...[...log.streams(sessionWritersPrefix(sessionId))].filter((s) => sessionOfWriter(s.slice('writer/'.length)) === sessionId)];
  const parts: StreamRecords[] = [];
  for (const s of streams) {
    const r = [...log.read(s)].map(inputOf);
    if (r.length > 0) parts.push({ s, b: 0, r });
  }
  if (history === undefined) return parts;
  const commits = [...commitLog(log).read('')].filter((r) => r.payload.writerId !== null && sessionOfWriter(r.payload.writerId) === sessionId);
  const blobs: BlobAppend[] = [];
  const seen = new Set<string>();
  for (const c of commits) {
    if (c.type !== 'commit.prepared') continue;
    for (const f of c.payload.files) {
      if (seen.has(f.hash) || !(await history.has(f.hash))) continue;
      seen.add(f.hash);
      blobs.push({ type: 'blob', at: c.at, payload: { hash: f.hash, data: new Uint8Array(await history.get(f.hash)) } });
    }
  }
  if (blobs.length > 0) parts.push({ s: BLOBS_STREAM, b: 0, r: blobs });
  if (commits.length > 0) parts.push({ s: COMMITS_STREAM, b: 0, r: commits.map(inputOf) });
  return parts;
}
