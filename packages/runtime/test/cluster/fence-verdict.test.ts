import { describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/cluster-error.ts';
import { fenceVerdict } from '../../src/cluster/fence-verdict.ts';

describe('fenceVerdict: what the entry found at a refused index means', () => {
  const mine = { epoch: 3, daemon: 'a' };

  it('is fenced by a newer epoch, behind an older one, and its own write when the epoch is its own', () => {
    expect(fenceVerdict(mine, { epoch: 4, daemon: 'b' }, 9)).toBe('fenced');
    expect(fenceVerdict(mine, { epoch: 2, daemon: 'b' }, 9)).toBe('behind');
    expect(fenceVerdict(mine, { epoch: 3, daemon: 'a' }, 9)).toBe('mine');
  });

  it('reports two daemons writing in one epoch as interleaved', () => {
    expect(() => fenceVerdict(mine, { epoch: 3, daemon: 'b' }, 9)).toThrow(ClusterError);
    expect(() => fenceVerdict(mine, { epoch: 3, daemon: 'b' }, 9)).toThrow(/index 9 holds epoch 3 of b/);
  });
});
