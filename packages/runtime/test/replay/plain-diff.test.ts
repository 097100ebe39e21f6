import { describe, expect, it } from 'vitest';
import { firstDifference, plainEqual } from '../../src/replay/plain-diff.ts';

/* Protects the comparison `verifySession` relies on: decisions read back from the log against recomputed ones. */

describe('firstDifference', () => {
  it('finds nothing between equal plain values', () => {
    const value = { state: { tokens: 3, watermark: null, value: { idle: 'ready' } }, effects: [{ kind: 'publish', event: { type: 'status', text: '' } }] };
    expect(firstDifference(value, structuredClone(value))).toBeNull();
    expect(plainEqual([1, 'a', true, null], [1, 'a', true, null])).toBe(true);
  });

  it('treats a key holding undefined as absent (the log may drop such keys)', () => {
    expect(firstDifference({ a: 1, failure: undefined }, { a: 1 })).toBeNull();
    expect(firstDifference({ a: 1 }, { a: 1, failure: undefined })).toBeNull();
  });

  it('names the path of the first difference', () => {
    expect(firstDifference({ state: { watermark: 'm1' } }, { state: { watermark: 'm2' } })).toBe('state.watermark');
    expect(firstDifference({ effects: [{ kind: 'a' }] }, { effects: [{ kind: 'a' }, { kind: 'b' }] })).toBe('effects[1]');
    expect(firstDifference({ a: null }, { a: {} })).toBe('a');
    expect(firstDifference([1], { 0: 1 })).toBe('');
    expect(firstDifference({ n: 1 }, { n: '1' })).toBe('n');
  });
});
