import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { OWNER_SECRET_FILE, loadOwnerSecret, ownerDigest } from '@baton/gateway';
import { LmdbEventLog, bindSessionOwner, sessionOwner } from '@baton/runtime';
import type { CliIo } from '../cli-io.ts';
import { runningDaemonPid } from '../daemon/daemon-pid-file.ts';
import { EXIT } from '../exit-codes.ts';

export interface RebindOptions {
  readonly dataDir: string;
  /** The credential the session belongs to from now on: the user's new API key. */
  readonly key: string;
  /** Time of the `session.bound` records. */
  readonly now?: number;
}

/** Exit codes of `baton rebind`. */
export const REBIND_EXIT = { ok: EXIT.ok, refused: EXIT.failed, notFound: EXIT.notFound } as const;

/**
 * `baton rebind <session>`: a user rotated their API key; their gateway sessions are bound to the new one. Run by
 * whoever holds the data directory (it needs the gateway's ownership secret there) while no daemon serves it: the
 * session and every slice of it (`<session>-s<n>`) bound to the same credential get a `session.bound` record with the
 * digest of the new key. The key itself is never written.
 */
export async function runRebind(sessionId: string, options: RebindOptions, io: CliIo): Promise<number> {
  const events = join(options.dataDir, 'events');
  if (!existsSync(events)) {
    io.err(`baton rebind: no event log at ${events} (is --data-dir right?)`);
    return REBIND_EXIT.notFound;
  }
  if (!existsSync(join(options.dataDir, OWNER_SECRET_FILE))) {
    io.err(`baton rebind: no ${OWNER_SECRET_FILE} in ${options.dataDir}: no gateway bound sessions with this data directory`);
    return REBIND_EXIT.notFound;
  }
  const pid = runningDaemonPid(options.dataDir);
  if (pid !== null) {
    io.err(`baton rebind: a daemon (pid ${pid}) is serving ${options.dataDir}; stop it first (sessions are rebound in its log)`);
    return REBIND_EXIT.refused;
  }
  if (options.key.trim() === '') {
    io.err('baton rebind: no new key given (BATON_REBIND_KEY, or one line on stdin)');
    return REBIND_EXIT.refused;
  }
  const owner = ownerDigest(loadOwnerSecret(options.dataDir), options.key.trim());
  const log = LmdbEventLog.open({ path: events });
  try {
    if (log.lastSeq(`session/${sessionId}`) === 0) {
      io.err(`baton rebind: unknown session ${sessionId}`);
      return REBIND_EXIT.notFound;
    }
    const previous = sessionOwner(log, sessionId);
    const slices = [...log.streams(`session/${sessionId}-s`)]
      .map((s) => s.slice('session/'.length))
      .filter((s) => /-s\d+$/.test(s) && s.slice(0, s.lastIndexOf('-s')) === sessionId && sessionOwner(log, s) === previous);
    const now = options.now ?? Date.now();
    for (const s of [sessionId, ...slices]) await bindSessionOwner(log, s, owner, now);
    io.out(`rebound ${sessionId}${slices.length > 0 ? ` and its slices ${slices.join(', ')}` : ''} to the new key`);
    return REBIND_EXIT.ok;
  } finally {
    await log.close();
  }
}
