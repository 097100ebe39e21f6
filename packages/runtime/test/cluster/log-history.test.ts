import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { fenceVerdict } from '../../src/cluster/fence-verdict.ts';
import { encodeEntry, entriesOf, decodeEntry, type BatchEntry, type LogEntry } from '../../src/cluster/log-entry.ts';
import { foldLogEntries, type IndexedEntry } from '../../src/cluster/log-history.ts';

const marker = (e: number, d: string): LogEntry => ({ k: 'marker', e, d });
const batch = (e: number, d: string, tag: string): BatchEntry => ({ k: 'batch', e, d, a: [{ s: 'session/s', b: 0, r: [{ type: 't', at: 0, payload: tag }] }] });
const indexed = (entries: LogEntry[]): IndexedEntry[] => entries.map((entry, i) => ({ index: i + 1, entry }));
const tags = (h: ReturnType<typeof foldLogEntries>): unknown[] => h.batches.map((b) => b.streams[0]?.r[0]?.payload);

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ClusterError ? err.code : `not a ClusterError: ${String(err)}`;
  }
  return undefined;
}

describe('foldLogEntries: a session’s replicated log as one owner at a time', () => {
  it('keeps the batches of each epoch after its marker, in order', () => {
    const h = foldLogEntries(indexed([marker(1, 'a'), batch(1, 'a', 'x'), batch(1, 'a', 'y'), marker(2, 'b'), batch(2, 'b', 'z')]));
    expect(tags(h)).toEqual(['x', 'y', 'z']);
    expect(h).toMatchObject({ index: 5, epoch: 2, owner: 'b', orphanedParts: 0 });
    expect(h.markers).toEqual([
      { index: 1, epoch: 1, daemon: 'a' },
      { index: 4, epoch: 2, daemon: 'b' },
    ]);
  });

  it('refuses an older epoch after a newer marker, a repeated marker, and an epoch without its marker', () => {
    expect(codeOf(() => foldLogEntries(indexed([marker(1, 'a'), marker(2, 'b'), batch(1, 'a', 'late')])))).toBe('interleaved');
    expect(codeOf(() => foldLogEntries(indexed([marker(2, 'a'), marker(2, 'a')])))).toBe('interleaved');
    expect(codeOf(() => foldLogEntries(indexed([marker(2, 'a'), marker(2, 'b')])))).toBe('interleaved');
    expect(codeOf(() => foldLogEntries(indexed([marker(1, 'a'), batch(2, 'b', 'x')])))).toBe('interleaved');
    expect(codeOf(() => foldLogEntries(indexed([batch(1, 'a', 'x')])))).toBe('interleaved');
  });

  it('refuses a missing index', () => {
    expect(codeOf(() => foldLogEntries([{ index: 1, entry: marker(1, 'a') }, { index: 3, entry: batch(1, 'a', 'x') }]))).toBe('gap');
  });

  it('joins the pieces of a large batch and drops the pieces a takeover cut off', () => {
    const big: BatchEntry = { ...batch(1, 'a', 'big'), a: [{ s: 'session/s', b: 0, r: [{ type: 't', at: 0, payload: 'p'.repeat(3_000) }] }] };
    const pieces = entriesOf(big, 1_000).map((e) => decodeEntry(encodeEntry(e), 'piece'));
    const whole = foldLogEntries(indexed([marker(1, 'a'), ...pieces]));
    expect(whole.batches).toHaveLength(1);
    expect(whole.orphanedParts).toBe(0);
    const cut = foldLogEntries(indexed([marker(1, 'a'), ...pieces.slice(0, 2), marker(2, 'b'), batch(2, 'b', 'after')]));
    expect(tags(cut)).toEqual(['after']);
    expect(cut.orphanedParts).toBe(2);
    expect(codeOf(() => foldLogEntries(indexed([marker(1, 'a'), pieces[1] as LogEntry])))).toBe('bad_entry');
  });

  it('continues from an earlier fold’s position', () => {
    const first = foldLogEntries(indexed([marker(1, 'a'), batch(1, 'a', 'x')]));
    const next = foldLogEntries([{ index: 3, entry: batch(1, 'a', 'y') }], first);
    expect(tags(next)).toEqual(['y']);
    expect(next).toMatchObject({ index: 3, epoch: 1, owner: 'a' });
  });
});

/**
 * The write protocol against a create-only subject store, with three daemons whose steps interleave arbitrarily: each
 * claims an epoch (epochs are handed out once each, in claim order, as KV create does), reads the newest entry (and
 * gives up if it is of a newer epoch), then places its marker after it — a separate step, others may act in between —
 * moving one index on while an older epoch holds the index it aimed at; then it writes batches until a refused write
 * finds a newer epoch. Whatever the interleaving, the log folds into single-owner epochs, has no holes, and holds
 * every write a daemon saw acknowledged.
 */
describe('the write protocol under every interleaving of three daemons', () => {
  interface Writer {
    readonly id: string;
    epoch: number;
    next: number;
    phase: 'idle' | 'target' | 'placing' | 'writing' | 'fenced';
    acked: string[];
    n: number;
  }

  test.prop([fc.array(fc.record({ who: fc.constantFrom(0, 1, 2), claim: fc.boolean() }), { minLength: 1, maxLength: 160 })])('folds cleanly and loses no acknowledged write', (steps) => {
    const log = new Map<number, LogEntry>();
    let lastEpoch = 0;
    const last = (): number => (log.size === 0 ? 0 : Math.max(...log.keys()));
    const put = (index: number, entry: LogEntry): 'stored' | ReturnType<typeof fenceVerdict> => {
      const found = log.get(index);
      if (found === undefined) {
        log.set(index, entry);
        return 'stored';
      }
      return fenceVerdict({ epoch: entry.e, daemon: entry.d }, { epoch: found.e, daemon: found.d }, index);
    };
    const writers: Writer[] = ['a', 'b', 'c'].map((id) => ({ id, epoch: 0, next: 0, phase: 'idle', acked: [], n: 0 }));
    for (const { who, claim } of steps) {
      const w = writers[who] as Writer;
      if (w.phase === 'idle' || w.phase === 'fenced' || (claim && w.phase === 'writing')) {
        if (!claim && w.phase !== 'idle') continue;
        w.epoch = ++lastEpoch;
        w.phase = 'target';
        continue;
      }
      if (w.phase === 'target') {
        const newest = log.get(last());
        if (newest !== undefined && newest.e > w.epoch) w.phase = 'fenced';
        else {
          w.next = last() + 1;
          w.phase = 'placing';
        }
        continue;
      }
      if (w.phase === 'placing') {
        const r = put(w.next, { k: 'marker', e: w.epoch, d: w.id });
        if (r === 'fenced') w.phase = 'fenced';
        else if (r === 'behind') w.next++;
        else {
          w.next++;
          w.phase = 'writing';
        }
        continue;
      }
      const tag = `${w.id}${w.epoch}-${w.n++}`;
      const r = put(w.next, batch(w.epoch, w.id, tag));
      if (r === 'fenced') w.phase = 'fenced';
      else if (r === 'stored') {
        w.next++;
        w.acked.push(tag);
      } else throw new Error(`unexpected ${r}`);
    }
    const entries = [...log.entries()].sort((x, y) => x[0] - y[0]).map(([index, entry]) => ({ index, entry }));
    const history = foldLogEntries(entries);
    expect(history.index).toBe(log.size);
    const kept = new Set(tags(history));
    for (const w of writers) for (const tag of w.acked) expect(kept.has(tag)).toBe(true);
    for (const b of history.batches) {
      const marker = [...history.markers].reverse().find((m) => m.index < b.index);
      expect(marker?.epoch).toBe(b.epoch);
    }
  });
});
