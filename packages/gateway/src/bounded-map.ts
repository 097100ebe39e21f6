/**
 * A map that forgets: at most `max` entries, the least recently used forgotten first, and entries not used for
 * `idleMs` forgotten as soon as another one is used. What it holds must be something the gateway can learn again (from
 * the daemon, or from the agent's next request), never the only copy of a fact.
 */
export class BoundedMap<K, V> {
  /** Entries oldest use first (a use moves an entry to the end). */
  readonly #entries = new Map<K, { value: V; usedAt: number }>();
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  /** Whether an entry must be kept past the bounds for now (it holds state not yet handed on). */
  readonly #pinned: (value: V) => boolean;

  constructor(options: { max: number; idleMs: number; now: () => number; pinned?: (value: V) => boolean }) {
    if (!(options.max >= 1)) throw new Error(`a bounded map holds at least one entry (max ${options.max})`);
    this.#max = options.max;
    this.#idleMs = options.idleMs;
    this.#now = options.now;
    this.#pinned = options.pinned ?? (() => false);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key`, counted as a use. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    entry.usedAt = this.#now();
    this.#entries.set(key, entry);
    this.#evict();
    return entry.value;
  }

  /** The value of `key`, not counted as a use. */
  peek(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, usedAt: this.#now() });
    this.#evict();
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  values(): IterableIterator<V> {
    return [...this.#entries.values()].map((e) => e.value)[Symbol.iterator]();
  }

  /** Forgets idle entries, then the least recently used past `max` (pinned ones are passed over). */
  #evict(): void {
    const idleBefore = this.#now() - this.#idleMs;
    let over = this.#entries.size - this.#max;
    for (const [key, entry] of this.#entries) {
      const idle = entry.usedAt <= idleBefore;
      if (!idle && over <= 0) break;
      if (this.#pinned(entry.value)) continue;
      this.#entries.delete(key);
      over--;
    }
  }
}
