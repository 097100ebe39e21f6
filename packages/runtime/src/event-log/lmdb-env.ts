/** Options and opening of the LMDB environment behind `LmdbEventLog`. */
import { open, type RootDatabase } from 'lmdb';
import type { ResidentFileProbe } from './mapped-pages.ts';

export interface LmdbEventLogOptions {
  /** Directory of the LMDB environment (created when missing). */
  readonly path: string;
  /** Initial/maximum map size in bytes (lmdb-js grows the map automatically by default). */
  readonly mapSize?: number;
  /**
   * Open for reading only (LMDB's read-only mode; the environment must exist): for tools that look at a log another
   * process may be appending to. `append` then rejects.
   */
  readonly readOnly?: boolean;
  /**
   * Bytes of the data file this process may keep mapped-resident before the environment is closed and reopened
   * (default 16 MiB; 0 never). See `MappedPages`.
   */
  readonly releaseMappedBytes?: number;
  /** How resident file pages are measured (default: `RssFile` of `/proc/self/status` where it exists). */
  readonly residentFileProbe?: ResidentFileProbe;
  /** How an environment is closed to release its mapped pages (default its own `close()`; tests slow it down). */
  readonly closeForRelease?: (env: RootDatabase) => Promise<void>;
}

/** Opens the environment at `options.path` (at start and again after each release of mapped pages). */
export function openEnv(options: LmdbEventLogOptions): RootDatabase {
  return open({
    path: options.path,
    ...(options.mapSize === undefined ? {} : { mapSize: options.mapSize }),
    ...(options.readOnly === true ? { readOnly: true } : {}),
    maxDbs: 8,
    // Each flush is one explicit write transaction (`LmdbEventLog.commitBatch`). lmdb-js's own batching of the
    // writes of an event-loop turn is off: when such a batch's commit fails (a full disk), it rejects a promise of its
    // own that nobody holds, and an unhandled rejection ends the process.
    eventTurnBatching: false,
  });
}
