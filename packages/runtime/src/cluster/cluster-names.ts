import { ClusterError } from './cluster-error.ts';

/** Session ids the protocol accepts; they are also valid NATS subject tokens and KV key tokens. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Daemon ids are generated (`baton-xxxxxxxx`) but checked anyway: they are KV key tokens. */
const DAEMON_ID = /^[A-Za-z0-9_-]{1,64}$/;
const PREFIX = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
/** Project ids are memory-tree path segments; they are KV key tokens too. */
const PROJECT_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** A shared project file's name without `.md`: `MEMORY` or a spillover `MEMORY-<topic>`. */
const FILE_STEM = /^MEMORY(?:-[A-Za-z0-9_-]{1,80})?$/;

/**
 * Names of everything the cluster keeps in JetStream for one subject prefix:
 * - the log stream `<PREFIX>_LOG` on `<prefix>.log.>`, one subject per record `<prefix>.log.<sid>.<index>`;
 * - the KV bucket `<prefix>_cluster` with `epoch.<sid>.<n>` (one key per claim, created once, never deleted),
 *   `owner.<sid>` (a hint to the newest epoch), `daemon.<id>` (a daemon's heartbeat), and the project memory files
 *   every daemon shares: `mem.<project>.<stem>.<n>` (version n of a file, created once, never deleted) and
 *   `memhead.<project>.<stem>` (a hint to the newest version).
 */
export interface ClusterNames {
  readonly prefix: string;
  readonly logStream: string;
  readonly logSubjects: string;
  readonly bucket: string;
  logSubject(sessionId: string, index: number): string;
  /** Every record subject of one session. */
  sessionFilter(sessionId: string): string;
  /** The JetStream message id of the record at `index` written in `epoch`: a retry of the same write is a duplicate. */
  msgId(sessionId: string, index: number, epoch: number): string;
  epochKey(sessionId: string, epoch: number): string;
  ownerKey(sessionId: string): string;
  daemonKey(daemonId: string): string;
  readonly daemonKeys: string;
  memoryVersionKey(projectId: string, stem: string, version: number): string;
  memoryHeadKey(projectId: string, stem: string): string;
  /** Every head hint of one project's files. */
  memoryHeads(projectId: string): string;
  /** Every head hint of every project. */
  readonly allMemoryHeads: string;
  /** The project and file stem a head hint key names (null when the key is not one). */
  memoryHeadOf(key: string): { projectId: string; stem: string } | null;
  /** The index a record subject names (NaN when the subject is not one). */
  indexOf(subject: string): number;
}

export function checkSessionId(sessionId: string): string {
  if (!SESSION_ID.test(sessionId)) throw new ClusterError('config', `invalid session id ${JSON.stringify(sessionId)}`);
  return sessionId;
}

export function checkDaemonId(daemonId: string): string {
  if (!DAEMON_ID.test(daemonId)) throw new ClusterError('config', `invalid daemon id ${JSON.stringify(daemonId)}`);
  return daemonId;
}

export function checkProjectId(projectId: string): string {
  if (!PROJECT_ID.test(projectId)) throw new ClusterError('config', `invalid project id ${JSON.stringify(projectId)}`);
  return projectId;
}

export function checkFileStem(stem: string): string {
  if (!FILE_STEM.test(stem)) throw new ClusterError('config', `not a shared project file: ${JSON.stringify(stem)}`);
  return stem;
}

function checkIndex(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new ClusterError('config', `${what} must be a positive integer, got ${String(n)}`);
  return n;
}

/** The names for subject prefix `prefix` (default `baton`); throws `ClusterError('config')` for an unusable prefix. */
export function clusterNames(prefix = 'baton'): ClusterNames {
  if (!PREFIX.test(prefix)) throw new ClusterError('config', `invalid subject prefix ${JSON.stringify(prefix)}`);
  const flat = prefix.replace(/[^A-Za-z0-9_-]/g, '_');
  const log = `${prefix}.log`;
  return {
    prefix,
    logStream: `${flat.toUpperCase()}_LOG`,
    logSubjects: `${log}.>`,
    bucket: `${flat}_cluster`,
    logSubject: (sid, index) => `${log}.${checkSessionId(sid)}.${checkIndex(index, 'index')}`,
    sessionFilter: (sid) => `${log}.${checkSessionId(sid)}.>`,
    msgId: (sid, index, epoch) => `${checkSessionId(sid)}-${checkIndex(index, 'index')}-${checkIndex(epoch, 'epoch')}`,
    epochKey: (sid, epoch) => `epoch.${checkSessionId(sid)}.${checkIndex(epoch, 'epoch')}`,
    ownerKey: (sid) => `owner.${checkSessionId(sid)}`,
    daemonKey: (id) => `daemon.${checkDaemonId(id)}`,
    daemonKeys: 'daemon.>',
    memoryVersionKey: (pid, stem, n) => `mem.${checkProjectId(pid)}.${checkFileStem(stem)}.${checkIndex(n, 'version')}`,
    memoryHeadKey: (pid, stem) => `memhead.${checkProjectId(pid)}.${checkFileStem(stem)}`,
    memoryHeads: (pid) => `memhead.${checkProjectId(pid)}.*`,
    allMemoryHeads: 'memhead.>',
    memoryHeadOf: (key) => {
      const parts = key.split('.');
      if (parts.length !== 3 || parts[0] !== 'memhead') return null;
      const [, projectId = '', stem = ''] = parts;
      return PROJECT_ID.test(projectId) && FILE_STEM.test(stem) ? { projectId, stem } : null;
    },
    indexOf: (subject) => {
      if (!subject.startsWith(`${log}.`)) return Number.NaN;
      const last = subject.slice(subject.lastIndexOf('.') + 1);
      return /^[1-9][0-9]*$/.test(last) ? Number(last) : Number.NaN;
    },
  };
}
