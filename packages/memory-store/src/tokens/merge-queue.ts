/**
 * A min-heap of candidate merges, each a pair rank and the index of the pair's first byte, ordered by rank and then
 * by index, so that the leftmost of equally ranked pairs comes first. Both are packed into one double
 * (`rank * 2^32 + index`, exact while ranks stay below 2^21) in a typed array that grows as needed.
 */
const INDEX_SPAN = 0x1_0000_0000;

export class MergeQueue {
  #keys = new Float64Array(256);
  #size = 0;

  /** Whether no candidate is left. */
  get empty(): boolean {
    return this.#size === 0;
  }

  clear(): void {
    this.#size = 0;
  }

  push(rank: number, index: number): void {
    if (this.#size === this.#keys.length) {
      const grown = new Float64Array(this.#keys.length * 2);
      grown.set(this.#keys);
      this.#keys = grown;
    }
    const keys = this.#keys;
    const key = rank * INDEX_SPAN + index;
    let at = this.#size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = keys[parent] ?? 0;
      if (above <= key) break;
      keys[at] = above;
      at = parent;
    }
    keys[at] = key;
  }

  /** Takes the first candidate out; `rankOf` and `indexOf` read its parts. The queue must not be empty. */
  pop(): number {
    const keys = this.#keys;
    const top = keys[0] ?? 0;
    const last = keys[--this.#size] ?? 0;
    const size = this.#size;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && (keys[child + 1] ?? 0) < (keys[child] ?? 0)) child++;
      const below = keys[child] ?? 0;
      if (below >= last) break;
      keys[at] = below;
      at = child;
    }
    keys[at] = last;
    return top;
  }

  /** Shrinks the storage back to its first size, after a huge piece. */
  release(): void {
    this.#keys = new Float64Array(256);
    this.#size = 0;
  }
}

/** The rank of a key `pop` returned. */
export function rankOf(key: number): number {
  return Math.floor(key / INDEX_SPAN);
}

/** The byte index of a key `pop` returned. */
export function indexOf(key: number): number {
  return key % INDEX_SPAN;
}
