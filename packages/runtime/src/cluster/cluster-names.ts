import { ClusterError } from './cluster-error.ts';

/** Session ids the protocol accepts; they are also valid NATS subject tokens and KV key tokens. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Daemon ids are generated (`baton-xxxxxxxx`) but checked anyway: they are KV key tokens. */
const DAEMON_ID = /^[A-Za-z0-9_-]{1,64}$/;
const PREFIX = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/**
 * Names of everything the cluster keeps in JetStream for one subject prefix:
 * - the log stream `<PREFIX>_LOG` on `<prefix>.log.>`, one subject per record `<prefix>.log.<sid>.<index>`;
 * - the KV bucket `<prefix>_cluster` with `epoch.<sid>.<n>` (one key per claim, created once, never deleted),
 *   `owner.<sid>` (a hint to the newest epoch), `daemon.<id>` (a daemon's heartbeat) and the shared memory files.
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
    indexOf: (subject) => {
      if (!subject.startsWith(`${log}.`)) return Number.NaN;
      const last = subject.slice(subject.lastIndexOf('.') + 1);
      return /^[1-9][0-9]*$/.test(last) ? Number(last) : Number.NaN;
    },
  };
}
