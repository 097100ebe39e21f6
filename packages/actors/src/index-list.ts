import type { MessageIndexEntry } from './boundary.ts';

/**
 * The session's per-message index as a persistent, append-friendly list: plain data (it is stored in snapshot records
 * and restored with `resolveState`), never mutated once built. Entries live in chunks of `INDEX_CHUNK`; an append
 * copies only the last chunk and the outer chunk array, and shares every full chunk with the list it extends, so its
 * cost does not grow with the session's length. Every chunk but the last is full and no chunk is empty: the layout is
 * a function of the entries alone, so two lists with the same entries are the same data.
 */
export interface IndexList {
  readonly chunks: readonly (readonly MessageIndexEntry[])[];
  /** Number of entries (the sum of the chunks' lengths). */
  readonly length: number;
}

/** Entries per chunk. */
export const INDEX_CHUNK = 256;

export function emptyIndex(): IndexList {
  return { chunks: [], length: 0 };
}

/** The list holding `entries`, in order. */
export function indexFromEntries(entries: readonly MessageIndexEntry[]): IndexList {
  return appendToIndex(emptyIndex(), entries);
}

/**
 * `list` followed by `entries`. Fills the last chunk up to `INDEX_CHUNK` (a new array: the old one stays shared with
 * `list`), then opens new chunks; full chunks are reused as they are. Returns `list` itself when `entries` is empty.
 */
export function appendToIndex(list: IndexList, entries: readonly MessageIndexEntry[]): IndexList {
  if (entries.length === 0) return list;
  const chunks = list.chunks.slice();
  let from = 0;
  const last = chunks.at(-1);
  if (last !== undefined && last.length < INDEX_CHUNK) {
    from = Math.min(INDEX_CHUNK - last.length, entries.length);
    chunks[chunks.length - 1] = [...last, ...entries.slice(0, from)];
  }
  for (let i = from; i < entries.length; i += INDEX_CHUNK) chunks.push(entries.slice(i, i + INDEX_CHUNK));
  return { chunks, length: list.length + entries.length };
}

/**
 * All entries in order, as one array (a copy unless the list has a single chunk; never mutate it). Its cost grows with
 * the session: for the rare paths only (boundary selection when a writer starts, a rebuild's compaction and rebase).
 */
export function indexEntries(list: IndexList): readonly MessageIndexEntry[] {
  if (list.chunks.length === 1) return list.chunks[0] ?? [];
  const out: MessageIndexEntry[] = [];
  for (const chunk of list.chunks) for (const m of chunk) out.push(m);
  return out;
}

/** Ids of all entries, in order. */
export function indexIds(list: IndexList): string[] {
  const out: string[] = [];
  for (const chunk of list.chunks) for (const m of chunk) out.push(m.id);
  return out;
}

/** The newest entry, or undefined for an empty list. */
export function lastIndexEntry(list: IndexList): MessageIndexEntry | undefined {
  return list.chunks.at(-1)?.at(-1);
}

/** Whether `v` has the shape of an `IndexList` (chunks of entries whose lengths add up to `length`); entries unchecked. */
export function isIndexList(v: unknown): v is IndexList {
  if (typeof v !== 'object' || v === null) return false;
  const { chunks, length } = v as { chunks?: unknown; length?: unknown };
  if (!Array.isArray(chunks) || typeof length !== 'number') return false;
  let total = 0;
  for (const chunk of chunks as unknown[]) {
    if (!Array.isArray(chunk)) return false;
    total += chunk.length;
  }
  return total === length;
}
