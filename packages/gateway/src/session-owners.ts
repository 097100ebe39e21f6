import { BatonRequestError, type BatonClient } from '@baton/client';
import { BoundedMap } from './bounded-map.ts';

/** What the gateway learnt of a session key's owner, and when it asked. */
interface KnownOwner {
  /** The owner digest the daemon's log binds the key to (null: nobody yet). */
  owner: string | null;
  /** When the daemon was last asked (the gateway's clock). */
  askedAt: number;
}

export interface SessionOwnersOptions {
  readonly client: BatonClient;
  /** How long a refusal on a learnt binding stands before the daemon is asked again. */
  readonly recheckMs: number;
  /** Keys remembered at most, and how long an unused one is kept. */
  readonly max: number;
  readonly idleMs: number;
  readonly now: () => number;
  readonly log: (level: 'debug', msg: string, data: Record<string, unknown>) => void;
}

/**
 * Who may use each session key, as the daemon's log says: the owner digest of the credential of its first call the
 * upstream accepted (never the credential). A cache of the daemon's answers, bounded and forgetting idle keys: a
 * forgotten key is asked about again on its next request, so forgetting never hands a session to anyone.
 */
export class SessionOwners {
  readonly #o: SessionOwnersOptions;
  readonly #known: BoundedMap<string, KnownOwner>;

  constructor(options: SessionOwnersOptions) {
    this.#o = options;
    this.#known = new BoundedMap({ max: options.max, idleMs: options.idleMs, now: options.now });
  }

  /** Keys remembered now. */
  get size(): number {
    return this.#known.size;
  }

  /** The owner the gateway knows for a key (null: nobody yet; undefined: not known). */
  ownerOf(key: string): string | null | undefined {
    return this.#known.peek(key)?.owner;
  }

  /**
   * Whether a credential (its digest) may use a session key: the one the session is bound to, or any before it is.
   * The daemon is asked once per key (its log holds the binding, so it survives a restart of either); a session that
   * recorded nothing yet is bound to nobody (its first call failed upstream). A daemon that cannot answer leaves the
   * question to `open`, which checks the same binding before anything is recorded or rebuilt.
   */
  async mayUse(key: string, owner: string): Promise<boolean> {
    // A refusal on what the gateway learnt a while ago is checked with the daemon first: an operator may have rebound
    // the session (`baton rebind`) while this gateway kept running.
    const learnt = this.#known.get(key);
    let known = learnt;
    if (known !== undefined && known.owner !== null && known.owner !== owner && this.#o.now() - known.askedAt >= this.#o.recheckMs) known = undefined;
    if (known === undefined) {
      let bound: string | null = null;
      try {
        bound = (await this.#o.client.status(key)).owner ?? null;
      } catch (err) {
        if (!(err instanceof BatonRequestError && err.code === 'not_found')) {
          this.#o.log('debug', 'could not ask the daemon who owns a session', { session: key, error: err instanceof Error ? err.message : String(err) });
          return true;
        }
      }
      // A call that bound the key while the daemon was asked knows better than the answer (what was learnt before
      // the question does not).
      const meanwhile = this.#known.peek(key);
      known = meanwhile !== undefined && meanwhile !== learnt && meanwhile.owner !== null ? meanwhile : { owner: bound, askedAt: this.#o.now() };
      this.#known.set(key, known);
    }
    return known.owner === null || known.owner === owner;
  }

  /** A call on `key` by `owner` succeeded upstream: the key is `owner`'s from now on, if it was nobody's. */
  claimed(key: string, owner: string): void {
    const known = this.#known.peek(key);
    if (known !== undefined && known.owner !== null) return;
    this.#known.set(key, { owner, askedAt: this.#o.now() });
  }

  /** The daemon refused `key` to a credential the gateway let through: the next request asks it again. */
  forget(key: string): void {
    this.#known.delete(key);
  }
}
