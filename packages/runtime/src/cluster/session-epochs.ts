import type { KV } from '@nats-io/kv';
import { z } from 'zod';
import type { ClusterNames } from './cluster-names.ts';
import { isWrongLastSequence } from './jetstream-errors.ts';
import { checkKvValue, readKv } from './kv-value.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';

/** One claim of a session: epoch `epoch` belongs to daemon `daemon`, claimed at `at` (the claimant's wall clock). */
export interface EpochClaim {
  readonly epoch: number;
  readonly daemon: string;
  readonly at: number;
}

const ClaimValue = z.strictObject({ daemon: z.string().min(1), at: z.number() });
const HintValue = z.strictObject({ epoch: z.int().positive(), daemon: z.string().min(1) });

const text = new TextEncoder();

const JSON_VALUE = { name: 'JSON', decode: (bytes: Uint8Array): unknown => JSON.parse(new TextDecoder().decode(bytes)) };

function parse<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string): T {
  return checkKvValue(schema, bytes, key, JSON_VALUE);
}

/**
 * The epochs of sessions in the KV bucket. Epoch n of a session is the key `epoch.<sid>.<n>`, made with `create`
 * (exactly one daemon succeeds, also on a replicated bucket where compare-and-swap on a non-zero revision is not
 * serialised) and never deleted or updated (a create over a deleted key would be an update). The newest epoch is the
 * highest n that exists: found by probing upwards from the `owner.<sid>` hint, which is a blind put and may lag
 * behind, never run ahead (it is written after its epoch exists).
 */
export class SessionEpochs {
  readonly #kv: KV;
  readonly #names: ClusterNames;
  readonly #retry: RetryPolicy;

  constructor(kv: KV, names: ClusterNames, retry: RetryPolicy = DEFAULT_RETRY) {
    this.#kv = kv;
    this.#names = names;
    this.#retry = retry;
  }

  #get(key: string): Promise<Uint8Array | null> {
    return readKv(this.#kv, key, this.#retry);
  }

  /** Epoch `epoch` of the session, or null when it was never claimed. */
  async claimOf(sessionId: string, epoch: number): Promise<EpochClaim | null> {
    const key = this.#names.epochKey(sessionId, epoch);
    const value = await this.#get(key);
    return value === null ? null : { epoch, ...parse(ClaimValue, value, key) };
  }

  /** The newest claim of the session, or null when no daemon ever claimed it. */
  async latest(sessionId: string): Promise<EpochClaim | null> {
    const hintKey = this.#names.ownerKey(sessionId);
    const hint = await this.#get(hintKey);
    let epoch = hint === null ? 0 : parse(HintValue, hint, hintKey).epoch;
    let found = epoch === 0 ? null : await this.claimOf(sessionId, epoch);
    for (;;) {
      const next = await this.claimOf(sessionId, epoch + 1);
      if (next === null) return found;
      found = next;
      epoch++;
    }
  }

  /**
   * Claims epoch `epoch` for `daemon`; false when that epoch belongs to another daemon. A create retried after a lost
   * acknowledgement finds its own key: the claim is this daemon's when the key names it.
   */
  async create(sessionId: string, epoch: number, daemon: string, at: number): Promise<boolean> {
    const key = this.#names.epochKey(sessionId, epoch);
    try {
      await withRetry(`KV create ${key}`, () => this.#kv.create(key, text.encode(JSON.stringify({ daemon, at }))), this.#retry);
      return true;
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      return (await this.claimOf(sessionId, epoch))?.daemon === daemon;
    }
  }

  /** Points the hint at a claim just made (best effort: a lagging hint only costs later readers a probe). */
  async hint(sessionId: string, epoch: number, daemon: string): Promise<void> {
    await this.#kv.put(this.#names.ownerKey(sessionId), text.encode(JSON.stringify({ epoch, daemon }))).catch(() => {});
  }
}
