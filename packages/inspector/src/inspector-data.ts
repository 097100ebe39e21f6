import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HistoryStore } from '@baton/memory-store';
import { EventLogCommitJournal, LmdbEventLog } from '@baton/runtime';
import type { EventLog } from '@baton/log-schema';
import { InspectorError } from './inspector-error.ts';

/**
 * What the inspector reads from a data directory: the event log (session and writer streams, the commit journal) and
 * the content-addressed history of memory files. Nothing here writes.
 */
export class InspectorData {
  readonly dataDir: string;
  readonly log: EventLog;
  readonly journal: EventLogCommitJournal;
  readonly history: HistoryStore;
  readonly #owned: LmdbEventLog | null;

  private constructor(dataDir: string, log: EventLog, owned: LmdbEventLog | null) {
    this.dataDir = dataDir;
    this.log = log;
    this.journal = new EventLogCommitJournal(log);
    this.history = new HistoryStore(join(dataDir, 'history'));
    this.#owned = owned;
  }

  /**
   * Opens `<dataDir>/events` read-only, so a daemon may keep appending to it meanwhile.
   *
   * @throws InspectorError 404 when the directory holds no event log.
   */
  static open(dataDir: string): InspectorData {
    const root = resolve(dataDir);
    const events = join(root, 'events');
    if (!existsSync(join(events, 'data.mdb'))) throw new InspectorError(404, `no event log at ${events} (is --data-dir right?)`);
    const log = LmdbEventLog.open({ path: events, readOnly: true });
    return new InspectorData(root, log, log);
  }

  /** Reads through a log this process already has open (a daemon's own), which `close` leaves open. */
  static over(dataDir: string, log: EventLog): InspectorData {
    return new InspectorData(resolve(dataDir), log, null);
  }

  /** Closes the log if `open` opened it. */
  async close(): Promise<void> {
    await this.#owned?.close();
  }
}
