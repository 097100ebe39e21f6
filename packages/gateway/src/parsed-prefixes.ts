import { lastElementEnd, restMembersText, restOfArray, topLevelMembers } from './json-bytes.ts';

/** What the gateway keeps of the last large body of one session key, to parse the next one's new part only. */
interface Entry {
  /** The conversation member (`messages`, `input`). */
  readonly member: string;
  /** That body's bytes up to the end of the member's last item (a view of the body: nothing modifies a body). */
  readonly prefix: Buffer;
  /** The top-level members before the conversation member, parsed, in order. */
  readonly head: readonly (readonly [string, unknown])[];
  readonly headKeys: ReadonlySet<string>;
  /** The member's items, parsed. */
  readonly items: readonly unknown[];
  /** What the entry counts against the budget: its bytes, and as much again for its parsed items. */
  readonly size: number;
}

export interface ParsedPrefixesOptions {
  /**
   * Bytes kept over all keys, counting a body twice (its bytes and its parsed items; default 64 MiB); an entry over a
   * quarter of it is not kept.
   */
  readonly budget?: number;
  /**
   * Bodies below this size are parsed whole and not kept (default 64 KiB: below it the saving, tens of µs, is within
   * what keeping the parsed items costs the garbage collector).
   */
  readonly minBytes?: number;
}

const DEFAULT_BUDGET = 64 * 1024 * 1024;
const DEFAULT_MIN_BYTES = 64 * 1024;
/** Conversations kept per key: its main one, and side calls or sub-agents sent under the same session name. */
const PER_KEY = 4;

const text = (bytes: Buffer): string => bytes.toString('utf8');

/**
 * Parses request bodies whose conversation only grows, reading each body's known part once. For each key (a session
 * an agent names, under its credential) it keeps, for the last few conversations sent under it, the last body's
 * parsed items and its bytes up to the end of the conversation member's last item. When a body starts with those very
 * bytes, they parse to the same
 * values: only the bytes after them (the new items and the members that follow) are parsed, and the value returned is
 * the one `JSON.parse` gives for the whole body — the earlier items being the objects the last body's parse made
 * (nothing modifies them). Any other body is parsed whole: an edit anywhere in the known part, of any length, is a
 * difference in the bytes compared.
 */
export class ParsedPrefixes {
  /** Per key, the last bodies of its conversations (a side call, a sub-agent's), oldest first; keys by last use. */
  readonly #entries = new Map<string, Entry[]>();
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

  /** What the entries kept now count against the budget. */
  get bytes(): number {
    return this.#bytes;
  }

  /** `JSON.parse` of the body's text (and throws as it does), reusing what one of `key`'s last bodies parsed to. */
  parse(key: string, member: string, bytes: Buffer): unknown {
    if (bytes.length < this.#minBytes) return JSON.parse(text(bytes));
    const known = this.#entries.get(key) ?? [];
    for (let i = known.length - 1; i >= 0; i--) {
      const entry = known[i] as Entry;
      const extended = entry.member === member ? extend(entry, bytes) : null;
      if (extended === null) continue;
      this.hits++;
      this.#keep(key, extended.entry, entry);
      return extended.value;
    }
    this.misses++;
    const value = JSON.parse(text(bytes)) as unknown;
    const entry = 2 * bytes.length <= this.#budget / 4 ? entryOf(member, bytes, value) : null;
    if (entry !== null) this.#keep(key, entry, null);
    return value;
  }

  /** Keeps `entry` as `key`'s newest (in place of `replaced`), then drops the least recently used past the budget. */
  #keep(key: string, entry: Entry, replaced: Entry | null): void {
    const list = (this.#entries.get(key) ?? []).filter((e) => e !== replaced);
    if (replaced !== null) this.#bytes -= replaced.size;
    list.push(entry);
    this.#bytes += entry.size;
    if (list.length > PER_KEY) this.#bytes -= (list.shift() as Entry).size;
    this.#entries.delete(key);
    this.#entries.set(key, list);
    for (const [k, entries] of this.#entries) {
      if (this.#bytes <= this.#budget) break;
      while (entries.length > 0 && this.#bytes > this.#budget) this.#bytes -= (entries.shift() as Entry).size;
      if (entries.length === 0) this.#entries.delete(k);
    }
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
  return entry(member, bytes, end, head, new Set(head.map(([k]) => k)), [...(items as unknown[])]);
}

function entry(member: string, bytes: Buffer, end: number, head: Entry['head'], headKeys: ReadonlySet<string>, items: readonly unknown[]): Entry {
  return { member, prefix: bytes.subarray(0, end), head, headKeys, items, size: 2 * end };
}

/** The value of a body that starts with `known`'s bytes and the entry it leaves, or null when it does not. */
function extend(known: Entry, bytes: Buffer): { value: unknown; entry: Entry } | null {
  const n = known.prefix.length;
  if (bytes.length <= n || !known.prefix.equals(bytes.subarray(0, n))) return null;
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
    return { value, entry: entry(known.member, bytes, lastEnd, known.head, known.headKeys, items) };
  } catch {
    return null;
  }
}
