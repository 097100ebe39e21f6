import { describe, expect, it } from 'vitest';
import { RankTable } from '../../src/tokens/rank-table.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Ranks 0–3: "a", "b", a hole, "ab"; rank 4: the two bytes FF FE. */
function small(): RankTable {
  return new RankTable(Uint8Array.from([1, 1, 0, 2, 2]), Uint8Array.from([0x61, 0x62, 0x61, 0x62, 0xff, 0xfe]));
}

describe('RankTable', () => {
  it('finds each token at its rank, and nothing else', () => {
    const table = small();
    expect(table.size).toBe(5);
    expect(table.rankOf(bytes('a'), 0, 1)).toBe(0);
    expect(table.rankOf(bytes('xab'), 1, 3)).toBe(3);
    expect(table.rankOf(bytes('xab'), 2, 3)).toBe(1);
    expect(table.rankOf(Uint8Array.from([0xff, 0xfe]), 0, 2)).toBe(4);
    expect(table.rankOf(bytes('ba'), 0, 2)).toBe(-1);
    expect(table.rankOf(bytes('abc'), 0, 3)).toBe(-1);
    expect(table.rankOf(bytes(''), 0, 0)).toBe(-1);
    expect(table.tokenBytes(2)).toHaveLength(0);
    expect([...table.tokenBytes(3)]).toEqual([0x61, 0x62]);
  });

  it('finds every token of a large table whose hashes collide in a small slot range', () => {
    const lengths = new Uint8Array(5_000).fill(3);
    const all = new Uint8Array(15_000);
    for (let rank = 0; rank < 5_000; rank++) all.set([rank & 0xff, rank >> 8, 0x2a], rank * 3);
    const table = new RankTable(lengths, all);
    for (let rank = 0; rank < 5_000; rank++) expect(table.rankOf(all, rank * 3, rank * 3 + 3)).toBe(rank);
    expect(table.rankOf(Uint8Array.from([0, 0, 0x2b]), 0, 3)).toBe(-1);
  });

  it('reads back what it writes, and refuses other bytes', () => {
    const binary = small().toBinary();
    const again = RankTable.fromBinary(binary);
    expect(again.size).toBe(5);
    expect(again.rankOf(bytes('ab'), 0, 2)).toBe(3);
    expect(Buffer.compare(again.toBinary(), binary)).toBe(0);
    expect(() => RankTable.fromBinary(Uint8Array.from([0x42, 0x50, 0x45, 0x32, 0, 0, 0, 0]))).toThrow(/not a BPE1 table/);
    expect(() => RankTable.fromBinary(binary.subarray(0, 10))).toThrow(/truncated|lengths sum/);
    expect(() => RankTable.fromBinary(binary.subarray(0, binary.length - 1))).toThrow(/lengths sum/);
  });

  it('refuses a token that repeats an earlier one', () => {
    expect(() => new RankTable(Uint8Array.from([1, 1]), bytes('aa'))).toThrow(/repeats/);
  });
});
