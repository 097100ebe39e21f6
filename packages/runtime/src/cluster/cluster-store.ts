import { jetstream, jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { ClusterError } from './cluster-error.ts';
import type { ClusterNames } from './cluster-names.ts';

export interface ClusterStoreOptions {
  /** Replicas of the log stream and the KV bucket (3 on a 3-node cluster; at most the number of nodes). */
  readonly replicas: number;
  /** How long JetStream remembers message ids for deduplication: the horizon of a write's retries. Default 2 min. */
  readonly duplicateWindowMs?: number;
  /** Timeout of each JetStream request. Default 5 s. */
  readonly timeoutMs?: number;
}

/** Room kept in every log message for its headers and envelope. */
const HEADROOM = 4096;

/**
 * The JetStream resources of a cluster, created when missing: the replicated log stream (file storage, limits
 * retention, `discard: new`, no age limit, deduplication window) and the KV bucket of claims, heartbeats and shared
 * files. The KV handle reads from the bucket's leader (a handle allowed to read replicas may see a value older than
 * one just acknowledged).
 */
export class ClusterStore {
  readonly names: ClusterNames;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly kv: KV;
  readonly replicas: number;
  /** Largest entry payload a log message carries (the server's `max_payload` less room for headers). */
  readonly maxEntryBytes: number;

  private constructor(names: ClusterNames, nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, kv: KV, replicas: number) {
    this.names = names;
    this.nc = nc;
    this.js = js;
    this.jsm = jsm;
    this.kv = kv;
    this.replicas = replicas;
    this.maxEntryBytes = Math.max(64 * 1024, (nc.info?.max_payload ?? 1024 * 1024) - HEADROOM);
  }

  /** Opens (creating when missing) the log stream and the KV bucket; `ClusterError('config')` for bad options. */
  static async open(nc: NatsConnection, names: ClusterNames, options: ClusterStoreOptions): Promise<ClusterStore> {
    const { replicas } = options;
    if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) throw new ClusterError('config', `replicas must be an integer from 1 to 5, got ${String(replicas)}`);
    const timeout = options.timeoutMs ?? 5_000;
    const jsm = await jetstreamManager(nc, { timeout });
    const js = jetstream(nc, { timeout });
    const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
    try {
      await jsm.streams.info(names.logStream);
    } catch {
      await jsm.streams
        .add({
          name: names.logStream,
          subjects: [names.logSubjects],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.New,
          num_replicas: replicas,
          max_msg_size: maxPayload,
          duplicate_window: nanos(options.duplicateWindowMs ?? 120_000),
        })
        .catch(async (err: unknown) => {
          // Another daemon created it meanwhile: use that one.
          await jsm.streams.info(names.logStream).catch(() => {
            throw err;
          });
        });
    }
    const kvm = new Kvm(js);
    await kvm.create(names.bucket, { replicas, history: 1, maxValueSize: maxPayload - HEADROOM }).catch(async (err: unknown) => {
      await kvm.open(names.bucket).catch(() => {
        throw err;
      });
    });
    // `open` without options reads every key from the stream's leader.
    const kv = await kvm.open(names.bucket);
    return new ClusterStore(names, nc, js, jsm, kv, replicas);
  }
}
