import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MergeQueue, indexOf, rankOf } from '../../src/tokens/merge-queue.ts';

describe('MergeQueue', () => {
  it('gives candidates back by rank, then by index, however they were pushed and popped in between', () => {
    const candidate = fc.tuple(fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 5_000_000 }));
    fc.assert(
      fc.property(fc.array(fc.array(candidate, { maxLength: 40 }), { minLength: 1, maxLength: 30 }), fc.array(fc.nat(40), { minLength: 30, maxLength: 30 }), (batches, pops) => {
        const queue = new MergeQueue();
        const model: [number, number][] = [];
        batches.forEach((batch, b) => {
          for (const [rank, index] of batch) {
            queue.push(rank, index);
            model.push([rank, index]);
          }
          model.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
          for (let i = 0; i < (pops[b] ?? 0) && model.length > 0; i++) {
            const key = queue.pop();
            expect([rankOf(key), indexOf(key)]).toEqual(model.shift());
          }
          expect(queue.empty).toBe(model.length === 0);
        });
      }),
      { numRuns: 300 },
    );
  });
});
