import { join } from 'node:path';
import type { EventLog } from '@baton/log-schema';
import { HistoryStore, recoverCommits } from '@baton/memory-store';
import { EventLogCommitJournal } from '../memory/event-log-commit-journal.ts';
import { clearStagingRoot } from '../writer/staging.ts';
import type { DaemonLogger } from './daemon-options.ts';

/**
 * Start-up repair of a data directory: finishes memory commits a crash interrupted (roll forward from the history
 * store) and drops staging trees of writers that died with the previous process.
 */
export async function repairDataDir(dataDir: string, memoryRoot: string, log: EventLog, logger: DaemonLogger): Promise<void> {
  await clearStagingRoot(join(dataDir, 'staging'));
  const recovered = await recoverCommits({
    memoryRoot,
    history: new HistoryStore(join(dataDir, 'history')),
    journal: new EventLogCommitJournal(log),
  });
  if (recovered.length > 0) logger('warn', 'finished interrupted memory commits', { commits: recovered.map((c) => c.commitId) });
}
