import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsTransport, type NatsAuth } from '@baton/client';
import { BatonDaemon, LmdbEventLog, type ClusterOptions, type DaemonLogger } from '@baton/runtime';
import type { LoopbackModel } from '@baton/testing';
import { TEST_TAIL } from './conversation.ts';

/** A daemon run in this process with its own NATS connection, LMDB log and data directory. */
export interface ClusterMember {
  readonly daemon: BatonDaemon;
  readonly log: LmdbEventLog;
  readonly transport: NatsTransport;
  readonly dataDir: string;
}

export interface ClusterMemberOptions {
  /** A data directory to serve (default: a new temporary one). */
  readonly dataDir?: string;
  /** Cluster options besides the connection (default `{}`); false: the daemon runs alone. */
  readonly cluster?: Omit<ClusterOptions, 'connection'> | false;
  readonly prefix?: string;
  readonly logger?: DaemonLogger;
  /** How the daemon authenticates to NATS (default: no credentials). */
  readonly auth?: NatsAuth;
  /** Serve the project-scoped subjects only. */
  readonly requireScopedSubjects?: boolean;
}

/** Starts a daemon (pool 1, the loopback model, the tests' small tail) connected to `url` and waits until it is ready. */
export async function startClusterMember(url: string, model: LoopbackModel, options: ClusterMemberOptions = {}): Promise<ClusterMember> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'baton-cluster-member-')));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const transport = await NatsTransport.connect({ servers: url, ...(options.auth !== undefined ? { auth: options.auth } : {}) });
  const cluster = options.cluster ?? {};
  const daemon = BatonDaemon.start({
    transport,
    log,
    dataDir,
    poolSize: 1,
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
    model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
    tail: TEST_TAIL,
    ...(cluster === false ? {} : { cluster: { ...cluster, connection: transport.connection } }),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.requireScopedSubjects === true ? { requireScopedSubjects: true } : {}),
  });
  await daemon.ready();
  return { daemon, log, transport, dataDir };
}

/** Stops every member (errors of a member already stopped or cut off are ignored) and removes its data directory. */
export async function stopClusterMembers(members: readonly ClusterMember[]): Promise<void> {
  for (const m of members) {
    await m.daemon.stop().catch(() => {});
    await m.transport.close().catch(() => {});
    await m.log.close();
    await rm(m.dataDir, { recursive: true, force: true });
  }
}
