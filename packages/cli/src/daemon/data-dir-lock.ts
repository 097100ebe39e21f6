import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tryLock } from 'fs-native-extensions';

/** `<data>/daemon.lock`: held locked by the one process serving the data directory; it holds the holder's pid. */
export function dataDirLockPath(dataDir: string): string {
  return join(dataDir, 'daemon.lock');
}

/** Another process holds the data directory's lock. `holderPid` is null when its pid could not be read. */
export class DataDirInUseError extends Error {
  readonly code = 'data_dir_in_use';
  constructor(
    readonly dataDir: string,
    readonly holderPid: number | null,
  ) {
    super(`${dataDir} is in use by ${holderPid === null ? 'another process' : `pid ${holderPid}`} (it holds ${dataDirLockPath(dataDir)}); one daemon per data directory`);
    this.name = 'DataDirInUseError';
  }
}

/** The exclusive lock on a data directory, held until `release()` or the end of the process. */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

function holderPidOf(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Locks `dataDir` for this process (creating it when missing) and records `pid` in the lock file; throws
 * `DataDirInUseError` naming the holder when another process has it. The lock is the kernel's: it goes with the
 * process however that ends (SIGKILL included), so a killed daemon never blocks the next one. The lock file itself is
 * never removed: a process that opened it just before a removal would lock a file nobody else can see any more.
 */
export function lockDataDir(dataDir: string, pid: number = process.pid): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = dataDirLockPath(dataDir);
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  let locked = false;
  try {
    locked = tryLock(fd);
  } finally {
    if (!locked) closeSync(fd);
  }
  if (!locked) throw new DataDirInUseError(dataDir, holderPidOf(path));
  ftruncateSync(fd, 0);
  writeSync(fd, `${pid}\n`, 0);
  let held = true;
  return {
    path,
    release(): void {
      if (!held) return;
      held = false;
      closeSync(fd);
    },
  };
}

