import type { KV } from '@nats-io/kv';
import { CommitReasonSchema, type CommitReason } from '@baton/log-schema';
import { contentHash } from '@baton/memory-store';
import { pack, unpack } from 'msgpackr';
import { z } from 'zod';
import { ClusterError } from './cluster-error.ts';
import type { ClusterNames } from './cluster-names.ts';
import { isWrongLastSequence } from './jetstream-errors.ts';
import { checkKvValue, readKv } from './kv-value.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';

/** One version of a shared project file as the bucket holds it. */
export interface SharedVersion {
  readonly version: number;
  readonly hash: string;
  readonly data: Uint8Array;
  /** The writer whose commit made it (null for a restore). */
  readonly writerId: string | null;
  readonly reason: CommitReason;
  /** The daemon that created it. */
  readonly daemonId: string;
  /** Wall-clock time of the commit (for operators only). */
  readonly at: number;
}

const VersionValue = z.strictObject({
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  data: z.instanceof(Uint8Array),
  writerId: z.string().min(1).nullable(),
  reason: CommitReasonSchema,
  daemonId: z.string().min(1),
  at: z.number(),
});
/** `version` 0: the file is being created (a hint written first, so that listing the project's files finds it). */
const HeadValue = z.strictObject({ version: z.int().nonnegative() });

const MSGPACK_VALUE = { name: 'MessagePack', decode: (bytes: Uint8Array): unknown => unpack(bytes) };

function decode<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string): T {
  return checkKvValue(schema, bytes, key, MSGPACK_VALUE);
}

/**
 * The versions of the project memory files every daemon of a cluster shares, in the cluster's KV bucket. Version n of
 * a file is the key `mem.<project>.<stem>.<n>`, made with `create` — exactly one daemon succeeds, also on a replicated
 * bucket where compare-and-swap on a non-zero revision is not serialised — and never updated or deleted. A commit
 * based on version n creates n+1: a second commit on the same base finds the key taken, which is the conflict. The
 * newest version is the highest n that exists, found by probing upwards from the `memhead.<project>.<stem>` hint (a
 * blind put written after its version exists, so it may lag but never run ahead). Before creating a file's first version
 * the hint is put at 0, so a file whose creator died between the two writes is still listed by `stems`.
 */
export class SharedFileVersions {
  readonly #kv: KV;
  readonly #names: ClusterNames;
  readonly #retry: RetryPolicy;
  /** Largest file content a version may carry (the bucket's value limit less the envelope). */
  readonly maxBytes: number;

  constructor(kv: KV, names: ClusterNames, options: { maxValueBytes: number; retry?: RetryPolicy }) {
    this.#kv = kv;
    this.#names = names;
    this.#retry = options.retry ?? DEFAULT_RETRY;
    this.maxBytes = options.maxValueBytes - 1024;
  }

  #get(key: string): Promise<Uint8Array | null> {
    return readKv(this.#kv, key, this.#retry);
  }

  /** Version `version` of a file, or null when it does not exist. Throws `bad_entry` for a value that does not check. */
  async get(projectId: string, stem: string, version: number): Promise<SharedVersion | null> {
    const key = this.#names.memoryVersionKey(projectId, stem, version);
    const bytes = await this.#get(key);
    if (bytes === null) return null;
    const value = decode(VersionValue, bytes, key);
    if (contentHash(value.data) !== value.hash) throw new ClusterError('bad_entry', `KV ${key}: content does not match its hash`, { key });
    return { version, ...value };
  }

  /** The newest version of a file at or above `from` (null when none exists). */
  async newest(projectId: string, stem: string, from = 0): Promise<SharedVersion | null> {
    const hintKey = this.#names.memoryHeadKey(projectId, stem);
    const hint = await this.#get(hintKey);
    let version = Math.max(from, hint === null ? 0 : decode(HeadValue, hint, hintKey).version);
    let found = version === 0 ? null : await this.get(projectId, stem, version);
    if (found === null && version > 0) {
      // A hint or a caller's memory beyond what exists cannot happen (versions are never deleted): the bucket was reset.
      throw new ClusterError('gap', `shared file ${projectId}/${stem}: version ${version} is missing`, { projectId, stem, version });
    }
    for (;;) {
      const next = await this.get(projectId, stem, version + 1);
      if (next === null) return found;
      found = next;
      version++;
    }
  }

  /**
   * Creates version `version` of a file; false when it exists already with other content or from another commit (a
   * concurrent commit on the same base won). A create retried after a lost acknowledgement finds its own value: true.
   */
  async create(projectId: string, stem: string, version: number, value: Omit<SharedVersion, 'version'>): Promise<boolean> {
    const key = this.#names.memoryVersionKey(projectId, stem, version);
    if (value.data.byteLength > this.maxBytes) {
      throw new ClusterError('config', `${projectId}/${stem}.md is ${value.data.byteLength} bytes; a shared file may hold at most ${this.maxBytes}`, { projectId, stem });
    }
    if (version === 1) await withRetry(`KV put ${this.#names.memoryHeadKey(projectId, stem)}`, () => this.#kv.put(this.#names.memoryHeadKey(projectId, stem), pack({ version: 0 })), this.#retry);
    const bytes = pack({ hash: value.hash, data: value.data, writerId: value.writerId, reason: value.reason, daemonId: value.daemonId, at: value.at });
    try {
      await withRetry(`KV create ${key}`, () => this.#kv.create(key, bytes), this.#retry);
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      const found = await this.get(projectId, stem, version);
      return found !== null && found.hash === value.hash && found.daemonId === value.daemonId && found.writerId === value.writerId && found.at === value.at;
    }
    // Best effort: a lagging hint only costs later readers a probe.
    await this.#kv.put(this.#names.memoryHeadKey(projectId, stem), pack({ version })).catch(() => {});
    return true;
  }

  /** The stems of a project's shared files (every file that has a head hint). */
  async stems(projectId: string): Promise<string[]> {
    const keys = await withRetry(`KV keys ${this.#names.memoryHeads(projectId)}`, async () => {
      const out: string[] = [];
      for await (const key of await this.#kv.keys(this.#names.memoryHeads(projectId))) out.push(key);
      return out;
    }, this.#retry);
    return keys.flatMap((k) => {
      const named = this.#names.memoryHeadOf(k);
      return named === null ? [] : [named.stem];
    }).sort();
  }
}
