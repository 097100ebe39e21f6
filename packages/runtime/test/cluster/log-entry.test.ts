import { describe, expect, it } from 'vitest';
import { Packr } from 'msgpackr';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { decodeEntry, encodeEntry, entriesOf, joinParts, type BatchEntry, type PartEntry } from '../../src/cluster/log-entry.ts';

const batch: BatchEntry = {
  k: 'batch',
  e: 2,
  d: 'baton-a',
  a: [
    { s: 'session/s1', b: 4, r: [{ type: 'messages.appended', at: 10, payload: { messages: [{ id: 'm1', role: 'user', content: 'hi' }] }, keys: ['m:m1'] }] },
    { s: 'memory/commits', b: 0, r: [{ type: 'commit.prepared', at: 11, payload: { commitId: 'c' }, msgId: 'commit.prepared:c' }] },
  ],
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ClusterError ? err.code : `not a ClusterError: ${String(err)}`;
  }
  return undefined;
}

describe('replicated log entries', () => {
  it('round-trip markers and batches, optional record fields only when present', () => {
    expect(decodeEntry(encodeEntry({ k: 'marker', e: 1, d: 'baton-a' }), 'x')).toEqual({ k: 'marker', e: 1, d: 'baton-a' });
    const back = decodeEntry(encodeEntry(batch), 'x');
    expect(back).toEqual(batch);
    expect(back.k === 'batch' && 'msgId' in (back.a[0]?.r[0] ?? {})).toBe(false);
  });

  it('split a batch larger than a message into consecutive pieces that join back into it', () => {
    const big: BatchEntry = { ...batch, a: [{ s: 'session/s1', b: 0, r: [{ type: 'messages.appended', at: 1, payload: { text: 'x'.repeat(5_000) } }] }] };
    expect(entriesOf(batch, 1_000_000)).toEqual([batch]);
    const parts = entriesOf(big, 1_000) as PartEntry[];
    expect(parts.length).toBeGreaterThan(5);
    expect(parts.every((p, i) => p.k === 'part' && p.p === i && p.n === parts.length && p.e === 2)).toBe(true);
    const decoded = parts.map((p) => decodeEntry(encodeEntry(p), 'piece') as PartEntry);
    expect(joinParts(decoded, 'joined')).toEqual(big);
  });

  it('refuse what is not an entry with bad_entry naming where and the failing path', () => {
    const packr = new Packr({ useRecords: false });
    expect(codeOf(() => decodeEntry(new Uint8Array([0xc1]), 'baton.log.s.1'))).toBe('bad_entry');
    expect(codeOf(() => decodeEntry(packr.pack({ k: 'marker', e: 0, d: 'a' }), 'x'))).toBe('bad_entry');
    expect(codeOf(() => decodeEntry(packr.pack({ k: 'batch', e: 1, d: 'a', a: [] }), 'x'))).toBe('bad_entry');
    expect(codeOf(() => decodeEntry(packr.pack({ k: 'part', e: 1, d: 'a', p: 2, n: 2, x: new Uint8Array(1) }), 'x'))).toBe('bad_entry');
    expect(codeOf(() => decodeEntry(packr.pack({ k: 'marker', e: 1, d: 'a', extra: 1 }), 'x'))).toBe('bad_entry');
    expect(() => decodeEntry(packr.pack({ k: 'batch', e: 1, d: 'a', a: [{ s: 'session/x', b: -1, r: [{ type: 't', at: 1, payload: null }] }] }), 'baton.log.x.3')).toThrow(
      /^baton\.log\.x\.3: a\.0\.b: /,
    );
  });

  it('refuse pieces that join into something other than a batch', () => {
    const marker = encodeEntry({ k: 'marker', e: 1, d: 'a' });
    const parts: PartEntry[] = [
      { k: 'part', e: 1, d: 'a', p: 0, n: 2, x: marker.subarray(0, 3) },
      { k: 'part', e: 1, d: 'a', p: 1, n: 2, x: marker.subarray(3) },
    ];
    expect(codeOf(() => joinParts(parts, 'j'))).toBe('bad_entry');
  });
});
