import { createHash, type Hash } from 'node:crypto';
import { lastElementEnd, restMembersText, restOfArray, topLevelMembers } from './json-bytes.ts';

/** What the gateway keeps of the last large body of one session key, to parse the next one's new part only. */
interface Entry {
  /** The conversation member (`messages`, `input`). */
  readonly member: string;
  /** Bytes of that body up to the end of the member's last item. */
  readonly length: number;
  /** SHA-256 of those bytes, and the hash's state after them (copied to go on over a longer prefix). */
  readonly digest: Buffer;
  readonly state: Hash;
  /** The last bytes of the prefix (a copy), compared before anything is hashed. */
  readonly edge: Buffer;
  /** The top-level members before the conversation member, parsed, in order. */
  readonly head: readonly (readonly [string, unknown])[];
  readonly headKeys: ReadonlySet<string>;
  /** The member's items, parsed. */
  readonly items: readonly unknown[];
  /** What the entry counts against the budget: the size of its body. */
  readonly size: number;
}

export interface ParsedPrefixesOptions {
  /** Bytes of bodies whose parsed prefix is kept, over all keys (default 32 MiB); a body over a quarter is not kept. */
  readonly budget?: number;
  /** Bodies below this size are parsed whole and not kept (default 64 KiB: parsing them costs less than the check). */
  readonly minBytes?: number;
}

const DEFAULT_BUDGET = 32 * 1024 * 1024;
const DEFAULT_MIN_BYTES = 64 * 1024;
const EDGE = 16;

const text = (bytes: Buffer): string => bytes.toString('utf8');

/**
 * Parses request bodies whose conversation only grows, reading each body's known part once. For each key (a session
 * an agent names, under its credential) it keeps the last large body's parsed items and a SHA-256 of its bytes up to
 * the end of the conversation member's last item. When the next body's bytes up to there hash the same, they are the
 * same bytes, so they parse to the same values: only the bytes after them (the new items and the members that follow)
 * are parsed, and the value returned is the one `JSON.parse` gives for the whole body — the earlier items being the
 * objects the last body's parse made (nothing modifies them). Any other body is parsed whole. An edit anywhere in
 * the known part, of any length, changes the hash.
 */
export class ParsedPrefixes {
  readonly #entries = new Map<string, Entry>();
  readonly #budget: number;
  readonly #minBytes: number;
  #bytes = 0;
  /** Bodies whose known part was not parsed again, and bodies parsed whole (of those at least `minBytes`). */
  hits = 0;
  misses = 0;

  constructor(options: ParsedPrefixesOptions = {}) {
    this.#budget = options.budget ?? DEFAULT_BUDGET;
    this.#minBytes = options.minBytes ?? DEFAULT_MIN_BYTES;
  }

  /** Bytes of bodies kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** `JSON.parse` of the body's text (and throws as it does), reusing what `key`'s last body parsed to. */
  parse(key: string, member: string, bytes: Buffer): unknown {
    if (bytes.length < this.#minBytes) return JSON.parse(text(bytes));
    const known = this.#entries.get(key);
    const extended = known !== undefined && known.member === member ? extend(known, bytes) : null;
    if (extended !== null) {
      this.hits++;
      this.#keep(key, extended.entry);
      return extended.value;
    }
    this.misses++;
    this.#drop(key);
    const value = JSON.parse(text(bytes)) as unknown;
    const entry = bytes.length <= this.#budget / 4 ? entryOf(member, bytes, value) : null;
    if (entry !== null) this.#keep(key, entry);
    return value;
  }

  #keep(key: string, entry: Entry): void {
    this.#drop(key);
    this.#entries.set(key, entry);
    this.#bytes += entry.size;
    // The least recently used go first.
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.#budget) break;
      this.#entries.delete(k);
      this.#bytes -= e.size;
    }
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.size;
  }
}

/** The entry of a body parsed whole, or null when it is not one to keep (its member is no list of items, a key repeats). */
function entryOf(member: string, bytes: Buffer, value: unknown): Entry | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const items: unknown = (value as Record<string, unknown>)[member];
  if (!Array.isArray(items) || items.length === 0) return null;
  let members;
  try {
    members = topLevelMembers(bytes);
  } catch {
    return null;
  }
  // A key given twice parses to its last value: the parts could not be put back together as one parse does.
  const keys = new Set<string>();
  for (const m of members) {
    if (keys.has(m.key) || m.key === '__proto__') return null;
    keys.add(m.key);
  }
  const at = members.findIndex((m) => m.key === member);
  const span = members[at];
  if (span === undefined) return null;
  const end = lastElementEnd(bytes, span.valueStart, span.valueEnd);
  const head = members.slice(0, at).map((m) => [m.key, (value as Record<string, unknown>)[m.key]] as const);
  const state = createHash('sha256').update(bytes.subarray(0, end));
  return entry(member, bytes, end, state, head, new Set(head.map(([k]) => k)), [...(items as unknown[])]);
}

function entry(member: string, bytes: Buffer, end: number, state: Hash, head: Entry['head'], headKeys: ReadonlySet<string>, items: readonly unknown[]): Entry {
  // Copies: nothing of the body's own buffer is kept.
  return { member, length: end, digest: state.copy().digest(), state, edge: Buffer.from(bytes.subarray(Math.max(0, end - EDGE), end)), head, headKeys, items, size: bytes.length };
}

/** The value of a body that starts with `known`'s bytes and the entry it leaves, or null when it does not. */
function extend(known: Entry, bytes: Buffer): { value: unknown; entry: Entry } | null {
  const n = known.length;
  if (bytes.length <= n || !known.edge.equals(bytes.subarray(n - known.edge.length, n))) return null;
  const state = createHash('sha256').update(bytes.subarray(0, n));
  if (!state.copy().digest().equals(known.digest)) return null;
  try {
    // The bytes go on inside the member's list, right after its last known item: new items, the list's end, then the
    // members after it. Each part is parsed by `JSON.parse` in the same context as in the whole body (after an item
    // of a list; after a member of an object), so it takes what the whole body's parse would.
    const { lastEnd, close } = restOfArray(bytes, n);
    const added = (JSON.parse(`[0${bytes.toString('utf8', n, close + 1)}`) as unknown[]).slice(1);
    const rest = JSON.parse(restMembersText(bytes, close + 1)) as Record<string, unknown>;
    const restKeys = Object.keys(rest);
    if (restKeys.some((k) => k === known.member || k === '__proto__' || known.headKeys.has(k))) return null;
    const items = added.length === 0 ? known.items : [...known.items, ...added];
    const value: Record<string, unknown> = {};
    for (const [k, v] of known.head) value[k] = v;
    value[known.member] = [...items];
    for (const k of restKeys) value[k] = rest[k];
    state.update(bytes.subarray(n, lastEnd));
    return { value, entry: entry(known.member, bytes, lastEnd, state, known.head, known.headKeys, items) };
  } catch {
    return null;
  }
}
