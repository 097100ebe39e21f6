import { describe, expect, it } from 'vitest';
import { ArrivalOrder } from '../../src/daemon/arrival-order.ts';

const deferred = (): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } => {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe('ArrivalOrder', () => {
  it('starts requests of one key in arrival order when an earlier check takes longer', async () => {
    const order = new ArrivalOrder();
    const started: string[] = [];
    const slow = deferred();
    const a = order.run('s1', () => slow.promise, () => Promise.resolve(void started.push('a')));
    const b = order.run('s1', () => Promise.resolve(), () => Promise.resolve(void started.push('b')));
    const c = order.run('s1', () => Promise.resolve(), () => Promise.resolve(void started.push('c')));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([]);
    slow.resolve();
    await Promise.all([a, b, c]);
    expect(started).toEqual(['a', 'b', 'c']);
    expect(order.pending).toBe(0);
  });

  it('does not hold other keys back', async () => {
    const order = new ArrivalOrder();
    const started: string[] = [];
    const slow = deferred();
    const a = order.run('s1', () => slow.promise, () => Promise.resolve(void started.push('s1')));
    await order.run('s2', () => Promise.resolve(), () => Promise.resolve(void started.push('s2')));
    expect(started).toEqual(['s2']);
    slow.resolve();
    await a;
    expect(started).toEqual(['s2', 's1']);
  });

  it('rejects a request whose check fails and lets the next one go on; the result is the started call', async () => {
    const order = new ArrivalOrder();
    const failing = deferred();
    const started: string[] = [];
    const a = order.run('s1', () => failing.promise, () => Promise.resolve(void started.push('a')));
    const b = order.run('s1', () => Promise.resolve(), () => Promise.resolve(42));
    failing.reject(new Error('moved'));
    await expect(a).rejects.toThrow('moved');
    await expect(b).resolves.toBe(42);
    expect(started).toEqual([]);
    await expect(order.run('s1', () => Promise.resolve(), () => Promise.reject(new Error('call failed')))).rejects.toThrow('call failed');
    expect(order.pending).toBe(0);
  });
});
