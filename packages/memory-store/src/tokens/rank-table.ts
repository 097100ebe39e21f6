/**
 * A byte-pair rank table in typed arrays: every token's bytes laid end to end, their offsets, and an open-addressing
 * hash table from bytes to rank. About 4 MiB for o200k_base's 200 000 tokens, where a JS `Map` keyed by strings
 * costs tens of MiB in every thread that holds one.
 *
 * Serialised form (`toBinary`, `fromBinary`): the 4 bytes `BPE1`, the rank count as a little-endian uint32, one
 * length byte per rank (0 for a rank that is never looked up), then the tokens' bytes in rank order.
 */

const MAGIC = [0x42, 0x50, 0x45, 0x31]; // 'BPE1'
const HEADER_BYTES = 8;
/** Longest token the one-byte lengths can describe. */
export const MAX_TOKEN_BYTES = 255;

export class RankTable {
  /** Number of ranks, holes included. */
  readonly size: number;
  readonly #lengths: Uint8Array;
  readonly #bytes: Uint8Array;
  readonly #offsets: Uint32Array;
  // rank + 1 per slot, 0 for an empty slot; at most half full, so a probe stays short.
  readonly #slots: Int32Array;
  readonly #mask: number;

  /** A table of `lengths.length` ranks whose bytes are `bytes`, in rank order (a 0 length leaves a hole). */
  constructor(lengths: Uint8Array, bytes: Uint8Array) {
    this.size = lengths.length;
    this.#lengths = lengths;
    this.#bytes = bytes;
    this.#offsets = new Uint32Array(this.size + 1);
    let at = 0;
    for (let rank = 0; rank < this.size; rank++) {
      this.#offsets[rank] = at;
      at += lengths[rank] ?? 0;
    }
    this.#offsets[this.size] = at;
    if (at !== bytes.length) throw new Error(`rank table: lengths sum to ${at} bytes, ${bytes.length} given`);

    let capacity = 1024;
    while (capacity < this.size * 2) capacity *= 2;
    this.#slots = new Int32Array(capacity);
    this.#mask = capacity - 1;
    for (let rank = 0; rank < this.size; rank++) {
      const start = this.#offsets[rank] ?? 0;
      const end = this.#offsets[rank + 1] ?? 0;
      if (start === end) continue;
      let slot = hashBytes(bytes, start, end) & this.#mask;
      for (let entry = this.#slots[slot] ?? 0; entry !== 0; entry = this.#slots[slot] ?? 0) {
        if (this.#same(entry - 1, bytes, start, end)) throw new Error(`rank table: rank ${rank} repeats rank ${entry - 1}`);
        slot = (slot + 1) & this.#mask;
      }
      this.#slots[slot] = rank + 1;
    }
  }

  /** The rank of the token whose bytes are `key[start..end)`, or -1 when there is none. */
  rankOf(key: Uint8Array, start: number, end: number): number {
    const slots = this.#slots;
    let slot = hashBytes(key, start, end) & this.#mask;
    for (;;) {
      const entry = slots[slot] ?? 0;
      if (entry === 0) return -1;
      if (this.#same(entry - 1, key, start, end)) return entry - 1;
      slot = (slot + 1) & this.#mask;
    }
  }

  /** Whether the bytes of `rank` are `key[start..end)`. */
  #same(rank: number, key: Uint8Array, start: number, end: number): boolean {
    const from = this.#offsets[rank] ?? 0;
    const length = end - start;
    if ((this.#offsets[rank + 1] ?? 0) - from !== length) return false;
    const bytes = this.#bytes;
    for (let i = 0; i < length; i++) if (bytes[from + i] !== key[start + i]) return false;
    return true;
  }

  /** The bytes of `rank` (empty for a hole). */
  tokenBytes(rank: number): Uint8Array {
    return this.#bytes.subarray(this.#offsets[rank] ?? 0, this.#offsets[rank + 1] ?? 0);
  }

  /** The serialised table, which {@link RankTable.fromBinary} reads back. */
  toBinary(): Uint8Array {
    const out = new Uint8Array(HEADER_BYTES + this.size + this.#bytes.length);
    out.set(MAGIC, 0);
    new DataView(out.buffer).setUint32(4, this.size, true);
    out.set(this.#lengths, HEADER_BYTES);
    out.set(this.#bytes, HEADER_BYTES + this.size);
    return out;
  }

  /** Reads a serialised table; the table keeps views into `binary` instead of copying it. */
  static fromBinary(binary: Uint8Array): RankTable {
    if (binary.length < HEADER_BYTES || MAGIC.some((b, i) => binary[i] !== b)) throw new Error('rank table: not a BPE1 table');
    const size = new DataView(binary.buffer, binary.byteOffset, binary.byteLength).getUint32(4, true);
    if (binary.length < HEADER_BYTES + size) throw new Error('rank table: truncated');
    return new RankTable(binary.subarray(HEADER_BYTES, HEADER_BYTES + size), binary.subarray(HEADER_BYTES + size));
  }
}

/** FNV-1a over `key[start..end)`. */
function hashBytes(key: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (key[i] ?? 0), 0x01000193);
  return hash >>> 0;
}
