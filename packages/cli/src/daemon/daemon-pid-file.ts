import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `<data>/daemon.pid`: written by `baton daemon` while it serves, so other commands can tell it is running. */
export function daemonPidPath(dataDir: string): string {
  return join(dataDir, 'daemon.pid');
}

/** Records this process as the data directory's daemon. */
export function writeDaemonPid(dataDir: string, pid: number = process.pid): void {
  writeFileSync(daemonPidPath(dataDir), `${pid}\n`);
}

/** Removes the pid file if it still names `pid` (another daemon may have replaced it). */
export function removeDaemonPid(dataDir: string, pid: number = process.pid): void {
  if (readDaemonPid(dataDir) === pid) rmSync(daemonPidPath(dataDir), { force: true });
}

function readDaemonPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(daemonPidPath(dataDir), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The pid of a daemon that seems to be serving `dataDir`: its pid file names a live process. Null when there is no
 * pid file or it is stale (the daemon was killed without cleaning up). A daemon embedded in another program through
 * `BatonDaemon.start` writes no pid file and is not seen.
 */
export function runningDaemonPid(dataDir: string): number | null {
  const pid = readDaemonPid(dataDir);
  return pid !== null && alive(pid) ? pid : null;
}
