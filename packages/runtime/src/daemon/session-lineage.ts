import { LogRecordError, sessionStream, type EventLog } from '@baton/log-schema';
import { commitFiles, type CommitJournal, type HistoryStore } from '@baton/memory-store';
import { ProtocolError, type Lineage, type OpenLineage } from '@baton/protocol';
import { sessionOwner } from './session-owner.ts';
import { unknownSession } from './session-actor-load.ts';
import { newestDecision } from './session-list.ts';

/** Where the memory files live and how a commit of them is journaled. */
export interface LineageFiles {
  readonly memoryRoot: string;
  readonly history: HistoryStore;
  readonly journal: CommitJournal;
}

/** What the daemon knows of the session a new one names as the one it continues. */
export interface LineageSource {
  readonly log: EventLog;
  /** The project the session belongs to (null: no such session). */
  readonly projectOf: (sessionId: string) => string | null;
  /** The watermark of the session's last settled writer: the message id its checkpoint covers up to (null: none). */
  readonly watermarkOf: (sessionId: string) => string | null;
}

/**
 * A session's watermark: the live one of a resident session (`resident`: its summary), else the one its newest
 * decision recorded (null: none, or a decision that does not read — a damaged log says nothing about it).
 */
export function lastWatermark(log: EventLog, sessionId: string, resident: { readonly watermark: string | null } | undefined): string | null {
  if (resident !== undefined) return resident.watermark;
  try {
    return newestDecision(log, sessionStream(sessionId))?.payload.state.watermark ?? null;
  } catch (err) {
    if (err instanceof LogRecordError) return null;
    throw err;
  }
}

/** A session's own checkpoint files: `checkpoint.md` and its spillovers (`checkpoint-<topic>.md`). */
const CHECKPOINT_FILE = /^checkpoint(?:-[A-Za-z0-9_-]{1,80})?\.md$/;

/**
 * Checks the `lineage` of an open that creates `sessionId` in `projectId` for `owner`: the session it names must be
 * another one, exist in the same project (`not_found` otherwise, the same answer as for an unknown session, so a
 * request learns nothing of another project's sessions) and be bound to the same owner as this request (`forbidden`
 * otherwise: a slice never starts from a checkpoint another credential's conversation wrote). Nothing is changed.
 */
export function checkLineage(source: LineageSource, lineage: OpenLineage, sessionId: string, projectId: string, owner: string | null): void {
  const from = lineage.from_session;
  if (from === sessionId) throw new ProtocolError('bad_request', `session ${sessionId} cannot continue itself`, [{ path: 'lineage.from_session', message: 'names the session being opened' }]);
  if (source.log.lastSeq(sessionStream(from)) === 0 || source.projectOf(from) !== projectId) throw unknownSession(from);
  if (sessionOwner(source.log, from) !== owner) {
    throw new ProtocolError('forbidden', `session ${from} belongs to another credential than this open`, { reason: 'lineage_owner', from_session: from });
  }
}

/**
 * The newest committed version of each checkpoint file of session `from` (relative path under its session directory
 * → content hash), and how many committed versions its `checkpoint.md` has (counted as `baton memory log` counts
 * them: the same commit applied twice is one version).
 */
async function committedCheckpoint(journal: CommitJournal, from: string): Promise<{ files: Map<string, string>; version: number }> {
  const dir = `sessions/${from}/`;
  const files = new Map<string, string>();
  let version = 0;
  let last: string | null = null;
  for (const entry of await journal.entries()) {
    if (entry.type !== 'commit.applied') continue;
    for (const file of entry.record.files) {
      if (!file.rel.startsWith(dir)) continue;
      const name = file.rel.slice(dir.length);
      if (!CHECKPOINT_FILE.test(name)) continue;
      files.set(name, file.hash);
      if (name !== 'checkpoint.md') continue;
      const seen = `${entry.record.commitId}:${file.hash}`;
      if (seen !== last) version++;
      last = seen;
    }
  }
  return { files, version };
}

/**
 * Starts session `sessionId` from the last committed checkpoint of the session it continues: that checkpoint's files
 * (checkpoint.md and its spillovers, from the history store) become the new session's first version, one commit of
 * reason `inherited` journaled in `memory/commits` (so `baton memory log` shows where it came from and a restart
 * finishes it like any other commit). Returns the lineage its opening records. A session with no committed
 * checkpoint yet gives nothing to inherit: `checkpoint_version` null, no commit.
 */
export async function inheritCheckpoint(files: LineageFiles, source: LineageSource, lineage: OpenLineage, sessionId: string, at: number): Promise<Lineage> {
  const from = lineage.from_session;
  const watermark = source.watermarkOf(from);
  const committed = await committedCheckpoint(files.journal, from);
  if (committed.version === 0) return { from_session: from, kind: lineage.kind, checkpoint_version: null, watermark };
  const contents = new Map<string, Uint8Array>();
  for (const [name, hash] of committed.files) contents.set(`sessions/${sessionId}/${name}`, await files.history.get(hash));
  await commitFiles(
    { memoryRoot: files.memoryRoot, history: files.history, journal: files.journal, commitId: `inherited-${sessionId}-v${committed.version}`, writerId: null, reason: 'inherited', at },
    contents,
  );
  return { from_session: from, kind: lineage.kind, checkpoint_version: committed.version, watermark };
}

/** Checks and inherits in one step: what `open` runs for a request that names the session it continues. */
export async function openLineage(
  files: LineageFiles,
  source: LineageSource,
  open: { readonly lineage: OpenLineage; readonly sessionId: string; readonly projectId: string; readonly owner: string | null; readonly at: number },
): Promise<Lineage> {
  checkLineage(source, open.lineage, open.sessionId, open.projectId, open.owner);
  return await inheritCheckpoint(files, source, open.lineage, open.sessionId, open.at);
}
