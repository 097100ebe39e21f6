import { describe, expect, it } from 'vitest';
import { CallGate } from '../../src/host/call-gate.ts';
import { WorkerSuspects } from '../../src/host/worker-suspects.ts';

describe('CallGate', () => {
  it('lets shared calls in side by side and an exclusive one in alone, first come first served', async () => {
    const gate = new CallGate();
    const order: string[] = [];
    expect(gate.enter(false)).toBeNull();
    expect(gate.enter(false)).toBeNull();
    const exclusive = gate.enter(true)?.then(() => order.push('exclusive'));
    // A shared call after a waiting exclusive one waits behind it.
    const late = gate.enter(false)?.then(() => order.push('late shared'));
    expect(exclusive).toBeDefined();
    expect(late).toBeDefined();
    gate.leave(false);
    await Promise.resolve();
    expect(order).toEqual([]);
    gate.leave(false);
    await exclusive;
    expect(order).toEqual(['exclusive']);
    gate.leave(true);
    await late;
    expect(order).toEqual(['exclusive', 'late shared']);
    gate.leave(false);
    expect(gate.enter(true)).toBeNull();
  });
});

describe('WorkerSuspects', () => {
  it('convicts a session in flight at its second death, clears one answered in between', () => {
    const suspects = new WorkerSuspects(2);
    expect(suspects.died(['runaway', 'bystander'])).toEqual(new Map());
    expect(suspects.has('runaway')).toBe(true);
    expect(suspects.has('bystander')).toBe(true);
    suspects.cleared('bystander');
    expect(suspects.died(['runaway'])).toEqual(new Map([['runaway', 2]]));
    expect(suspects.has('runaway')).toBe(false);
    expect(suspects.died(['bystander'])).toEqual(new Map());
  });

  it('refuses a threshold that is not a positive integer', () => {
    expect(() => new WorkerSuspects(0)).toThrow(RangeError);
  });
});
