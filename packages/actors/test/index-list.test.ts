import { decodeReply, encodeRequest } from '@baton/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageIndexEntry } from '../src/boundary.ts';
import { foldEvent, foldStart } from '../src/fold.ts';
import {
  INDEX_CHUNK,
  appendToIndex,
  emptyIndex,
  indexEntries,
  indexFromEntries,
  indexIds,
  isIndexList,
  lastIndexEntry,
  type IndexList,
} from '../src/index-list.ts';
import type { SessionContext } from '../src/session-context.ts';
import type { SessionEffect } from '../src/session-effects.ts';
import type { IndexedMessage, SessionEvent } from '../src/session-events.ts';
import { sessionMachine } from '../src/session-machine.ts';
import { BASE_INPUT } from './scenarios/drivers.ts';

const entry = (n: number): MessageIndexEntry => ({
  id: `m${n}`,
  role: n % 2 === 0 ? 'user' : 'assistant',
  tokens: n,
  textual: n % 3 !== 0,
  finished: n % 2 === 1,
  toolCallIds: n % 5 === 0 ? [`k${n}`] : [],
});

const entries = (from: number, count: number): MessageIndexEntry[] => Array.from({ length: count }, (_, i) => entry(from + i));

/** Appends batches of the given sizes, numbering entries on; returns every list along the way. */
function appendBatches(sizes: readonly number[], start: IndexList = emptyIndex()): IndexList[] {
  const lists = [start];
  let list = start;
  for (const size of sizes) {
    list = appendToIndex(list, entries(list.length, size));
    lists.push(list);
  }
  return lists;
}

/** Every chunk but the last is full and none is empty, and `length` counts the entries. */
function expectCanonical(list: IndexList): void {
  expect(list.chunks.length).toBe(Math.ceil(list.length / INDEX_CHUNK));
  list.chunks.forEach((chunk, i) => {
    if (i < list.chunks.length - 1) expect(chunk.length).toBe(INDEX_CHUNK);
    else expect(chunk.length).toBeGreaterThan(0);
  });
  expect(list.chunks.reduce((n, c) => n + c.length, 0)).toBe(list.length);
}

/** Freezes the list, its chunk array and its chunks: an append that wrote to any of them would throw. */
function deepFreeze(list: IndexList): IndexList {
  for (const chunk of list.chunks) Object.freeze(chunk);
  Object.freeze(list.chunks);
  return Object.freeze(list);
}

/** Session snapshots are stored as MessagePack (plain maps) and read back. */
const msgpackRoundTrip = <T>(value: T): T => decodeReply(encodeRequest(value, 'msgpack'), 'msgpack') as T;
const jsonRoundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('IndexList', () => {
  it('is empty to start with', () => {
    const list = emptyIndex();
    expect(list).toEqual({ chunks: [], length: 0 });
    expect(indexEntries(list)).toEqual([]);
    expect(indexIds(list)).toEqual([]);
    expect(lastIndexEntry(list)).toBeUndefined();
    expect(isIndexList(list)).toBe(true);
  });

  it('appends across chunk boundaries, keeping the entries in order', () => {
    const sizes = [1, INDEX_CHUNK - 2, 1, 1, 1, INDEX_CHUNK, 3 * INDEX_CHUNK + 7, 0, INDEX_CHUNK - 10, 1];
    const lists = appendBatches(sizes);
    let total = 0;
    for (const [i, list] of lists.entries()) {
      total += i === 0 ? 0 : (sizes[i - 1] as number);
      expect(list.length).toBe(total);
      expectCanonical(list);
      expect(indexEntries(list)).toEqual(entries(0, total));
      expect(indexIds(list)).toEqual(entries(0, total).map((m) => m.id));
      expect(lastIndexEntry(list)).toEqual(total === 0 ? undefined : entry(total - 1));
      // The layout depends on the entries only: built at once or appended in batches, it is the same data.
      expect(indexFromEntries(indexEntries(list))).toEqual(list);
      expect(isIndexList(list)).toBe(true);
    }
    expect(total).toBe(6 * INDEX_CHUNK);
  });

  it('any sequence of batches gives the entries in order and the layout a single batch gives', { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 2 * INDEX_CHUNK + 3 }), { maxLength: 12 }), (sizes) => {
        const list = appendBatches(sizes).at(-1) as IndexList;
        const all = entries(0, list.length);
        expect(indexEntries(list)).toEqual(all);
        expectCanonical(list);
        expect(JSON.stringify(list)).toBe(JSON.stringify(indexFromEntries(all)));
      }),
      { numRuns: 200 },
    );
  });

  it('an empty append returns the list itself', () => {
    const list = indexFromEntries(entries(0, 10));
    expect(appendToIndex(list, [])).toBe(list);
  });

  it('shares: appending never changes a list already built, and two appends to one list do not see each other', () => {
    for (const size of [0, 1, INDEX_CHUNK - 1, INDEX_CHUNK, INDEX_CHUNK + 1, 3 * INDEX_CHUNK + 5]) {
      const base = deepFreeze(indexFromEntries(entries(0, size)));
      const before = JSON.stringify(base);
      // Two branches from the same list (the model checker folds several events from one shared snapshot).
      const left = deepFreeze(appendToIndex(base, entries(1_000, 3)));
      const leftBefore = JSON.stringify(left);
      const right = deepFreeze(appendToIndex(base, entries(2_000, INDEX_CHUNK + 2)));
      const longer = appendToIndex(left, entries(3_000, 1));
      expect(JSON.stringify(base)).toBe(before);
      expect(JSON.stringify(left)).toBe(leftBefore);
      expect(indexEntries(base)).toEqual(entries(0, size));
      expect(indexEntries(left)).toEqual([...entries(0, size), ...entries(1_000, 3)]);
      expect(indexEntries(right)).toEqual([...entries(0, size), ...entries(2_000, INDEX_CHUNK + 2)]);
      expect(indexEntries(longer)).toEqual([...entries(0, size), ...entries(1_000, 3), ...entries(3_000, 1)]);
      // Full chunks are shared as they are; only the last (partial) chunk is copied.
      const full = Math.floor(size / INDEX_CHUNK);
      for (let i = 0; i < full; i++) {
        expect(left.chunks[i]).toBe(base.chunks[i]);
        expect(right.chunks[i]).toBe(base.chunks[i]);
      }
    }
  });

  it('round-trips through JSON and MessagePack as the same data, and appends the same afterwards', () => {
    for (const size of [0, 5, INDEX_CHUNK, 2 * INDEX_CHUNK + 17]) {
      const list = indexFromEntries(entries(0, size));
      for (const roundTrip of [jsonRoundTrip, msgpackRoundTrip]) {
        const back = roundTrip(list);
        expect(back).toEqual(list);
        expect(isIndexList(back)).toBe(true);
        expect(appendToIndex(back, entries(size, 300))).toEqual(appendToIndex(list, entries(size, 300)));
      }
    }
  });

  it('isIndexList rejects other shapes', () => {
    expect(isIndexList([entry(0)])).toBe(false);
    expect(isIndexList(null)).toBe(false);
    expect(isIndexList({ chunks: [[entry(0)]] })).toBe(false);
    expect(isIndexList({ chunks: [[entry(0)]], length: 2 })).toBe(false);
    expect(isIndexList({ chunks: [entry(0)], length: 1 })).toBe(false);
  });
});

describe('per-append cost', () => {
  const APPENDS = 20_000;

  /**
   * What an append copied: entries in chunks of `next` that are not chunks of `prev` (by identity), less the appended
   * ones. The old array index copied all of `prev` (`prev.length` entries) on every append.
   */
  function copiedEntries(prev: IndexList, next: IndexList): number {
    const shared = new Set(prev.chunks);
    let fresh = 0;
    for (const chunk of next.chunks) if (!shared.has(chunk)) fresh += chunk.length;
    return fresh - (next.length - prev.length);
  }

  it(`${APPENDS} single-entry appends: full chunks are reused and at most one chunk is copied per append`, { timeout: 60_000 }, () => {
    let list = emptyIndex();
    let maxCopied = 0;
    for (let n = 0; n < APPENDS; n++) {
      const next = appendToIndex(list, [entry(n)]);
      for (let i = 0; i < list.chunks.length - 1; i++) if (next.chunks[i] !== list.chunks[i]) throw new Error(`append ${n} copied full chunk ${i}`);
      maxCopied = Math.max(maxCopied, copiedEntries(list, next));
      list = next;
    }
    expect(list.length).toBe(APPENDS);
    expect(maxCopied).toBe(INDEX_CHUNK - 1);
    expect(indexIds(list)).toEqual(Array.from({ length: APPENDS }, (_, n) => `m${n}`));
  });

  it(`the session machine folds ${APPENDS} single-message appends copying at most one chunk of the index each`, { timeout: 60_000 }, () => {
    let snapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, BASE_INPUT).snapshot;
    let maxCopied = 0;
    let reused = 0;
    for (let n = 0; n < APPENDS; n++) {
      // User turns and finished assistant answers, with usage well below the first rung: no writer ever starts.
      const message: IndexedMessage =
        n % 2 === 0
          ? { id: `m${n}`, role: 'user', tokens: 10, textual: true, finished: false, toolCallIds: [], main: true, usageTotal: null }
          : { id: `m${n}`, role: 'assistant', tokens: 10, textual: true, finished: true, toolCallIds: [], main: true, usageTotal: 1_000 + (n % 100) };
      const event: SessionEvent = { type: 'messages.appended', messages: [message] };
      const step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, snapshot, event);
      expect(step.effects).toEqual([]);
      const prev: SessionContext = snapshot.context;
      const next: SessionContext = step.snapshot.context;
      for (let i = 0; i < prev.index.chunks.length - 1; i++) {
        if (next.index.chunks[i] !== prev.index.chunks[i]) throw new Error(`append ${n} copied full chunk ${i}`);
        reused++;
      }
      maxCopied = Math.max(maxCopied, copiedEntries(prev.index, next.index));
      snapshot = step.snapshot;
    }
    const { index } = snapshot.context;
    expect(index.length).toBe(APPENDS);
    expect(index.chunks.length).toBe(Math.ceil(APPENDS / INDEX_CHUNK));
    expect(maxCopied).toBe(INDEX_CHUNK - 1);
    expect(reused).toBeGreaterThan(0);
    expect(lastIndexEntry(index)?.id).toBe(`m${APPENDS - 1}`);
  });
});

describe('session snapshots', () => {
  const message = (n: number, usage: number): IndexedMessage =>
    n % 2 === 0
      ? { id: `m${n}`, role: 'user', tokens: 10, textual: true, finished: false, toolCallIds: [], main: true, usageTotal: null }
      : { id: `m${n}`, role: 'assistant', tokens: 10, textual: true, finished: true, toolCallIds: [], main: true, usageTotal: usage };
  const append = (n: number, usage = 1_000): SessionEvent => ({ type: 'messages.appended', messages: [message(n, usage)] });

  it('a context restored from JSON or MessagePack folds on exactly like the one it was stored from', { timeout: 60_000 }, () => {
    let snapshot = foldStart<typeof sessionMachine, SessionEffect>(sessionMachine, BASE_INPUT).snapshot;
    for (let n = 0; n < 2 * INDEX_CHUNK + 40; n++) snapshot = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, snapshot, append(n)).snapshot;
    // Then a rung fires and a writer starts (boundary selection over the whole index), and more messages follow.
    const rest: SessionEvent[] = [append(2 * INDEX_CHUNK + 41, 25_000), ...Array.from({ length: 300 }, (_, i) => append(2 * INDEX_CHUNK + 42 + i))];
    const run = (from: typeof snapshot) => {
      let s = from;
      const effects: SessionEffect[][] = [];
      for (const e of rest) {
        const step = foldEvent<typeof sessionMachine, SessionEffect>(sessionMachine, s, e);
        effects.push(step.effects);
        s = step.snapshot;
      }
      return { value: s.value, context: s.context, effects };
    };
    const straight = run(snapshot);
    expect(straight.effects.flat().some((e) => e.kind === 'writer.start')).toBe(true);
    for (const roundTrip of [jsonRoundTrip, msgpackRoundTrip]) {
      const stored = roundTrip({ value: snapshot.value, context: snapshot.context });
      expect(isIndexList(stored.context.index)).toBe(true);
      const restored = sessionMachine.resolveState({ value: stored.value, context: stored.context });
      expect(JSON.stringify(run(restored))).toBe(JSON.stringify(straight));
    }
  });
});
