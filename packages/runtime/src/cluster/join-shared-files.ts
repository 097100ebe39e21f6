import type { EventLog } from '@baton/log-schema';
import { HistoryStore } from '@baton/memory-store';
import { EventLogCommitJournal } from '../memory/event-log-commit-journal.ts';
import type { ClusterStore } from './cluster-store.ts';
import { followSharedFiles, type SharedFilesFollower } from './follow-shared-files.ts';
import { SharedFileVersions } from './shared-file-versions.ts';
import { SharedProjectFiles } from './shared-project-files.ts';

export interface JoinSharedFilesOptions {
  readonly store: ClusterStore;
  readonly daemonId: string;
  readonly memoryRoot: string;
  readonly historyDir: string;
  /** The daemon's own event log: versions written here are committed to its local journal (not replicated again). */
  readonly log: EventLog;
  readonly logger: (level: 'info' | 'warn', msg: string, data: Record<string, unknown>) => void;
}

/** A daemon's shared project files and the watch that keeps its copies current. */
export interface JoinedSharedFiles {
  readonly files: SharedProjectFiles;
  readonly follower: SharedFilesFollower;
}

/** Opens the cluster's shared project files for one daemon and starts following other daemons' commits. */
export async function joinSharedFiles(options: JoinSharedFilesOptions): Promise<JoinedSharedFiles> {
  const { store, logger } = options;
  const files = new SharedProjectFiles({
    versions: new SharedFileVersions(store.kv, store.names, { maxValueBytes: store.maxEntryBytes }),
    daemonId: options.daemonId,
    memoryRoot: options.memoryRoot,
    history: new HistoryStore(options.historyDir),
    journal: new EventLogCommitJournal(options.log),
    onReplaced: (info) => logger('info', "replaced this daemon's copy of a shared project file with the cluster's newest version", info),
  });
  const follower = await followSharedFiles(store.kv, store.names, files, (err) => logger('warn', 'bringing a shared project file up to date failed', { error: String(err) }));
  return { files, follower };
}
