import { ProtocolError } from '@baton/protocol';
import { describe, expect, it } from 'vitest';
import { StorageRetry, isStorageRefusal } from '../../src/daemon/storage-retry.ts';
import type { Clock, TimerHandle } from '../../src/time/clock.ts';

/** A clock whose timers run when the test fires them. */
class StepClock implements Clock {
  readonly timers = new Map<number, { fn: () => void; ms: number }>();
  #next = 1;
  now(): number {
    return 0;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#next++;
    this.timers.set(id, { fn, ms });
    return { id };
  }
  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id as number);
  }
  /** Runs the timers pending now. */
  fire(): void {
    const due = [...this.timers.values()];
    this.timers.clear();
    for (const t of due) t.fn();
  }
}

const storage = (): ProtocolError => new ProtocolError('unavailable', 'the event log could not write durably (No space left on device)', { reason: 'storage' });
/** Lets the attempt's rejection and the retry's handlers run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StorageRetry', () => {
  it('tells a storage refusal from other failures', () => {
    expect(isStorageRefusal(storage())).toBe(true);
    expect(isStorageRefusal(new ProtocolError('unavailable', 'draining'))).toBe(false);
    expect(isStorageRefusal(new ProtocolError('unavailable', 'moved', { reason: 'moved' }))).toBe(false);
    expect(isStorageRefusal(new Error('disk'))).toBe(false);
  });

  it('tries an input the log refused for want of storage again after the delay until it is taken', async () => {
    const clock = new StepClock();
    const retry = new StorageRetry(clock, 1_000);
    let attempts = 0;
    const retried: unknown[] = [];
    const failed: unknown[] = [];
    retry.run(
      () => (++attempts <= 2 ? Promise.reject(storage()) : Promise.resolve()),
      (err) => retried.push(err),
      (err) => failed.push(err),
    );
    await settle();
    expect(attempts).toBe(1);
    expect([...clock.timers.values()].map((t) => t.ms)).toEqual([1_000]);
    clock.fire();
    await settle();
    expect(attempts).toBe(2);
    clock.fire();
    await settle();
    expect(attempts).toBe(3);
    expect(retried).toHaveLength(2);
    expect(failed).toEqual([]);
    expect(clock.timers.size).toBe(0);
  });

  it('reports any other failure at once, without trying again', async () => {
    const clock = new StepClock();
    const retry = new StorageRetry(clock);
    const failed: unknown[] = [];
    const other = new ProtocolError('quarantined', 'cannot fold');
    retry.run(() => Promise.reject(other), () => {}, (err) => failed.push(err));
    await settle();
    expect(failed).toEqual([other]);
    expect(clock.timers.size).toBe(0);
  });

  it('tries nothing more once stopped: pending retries are cancelled and a refusal is reported', async () => {
    const clock = new StepClock();
    const retry = new StorageRetry(clock);
    let attempts = 0;
    const failed: unknown[] = [];
    retry.run(() => (++attempts, Promise.reject(storage())), () => {}, (err) => failed.push(err));
    await settle();
    expect(clock.timers.size).toBe(1);
    retry.stop();
    expect(clock.timers.size).toBe(0);
    retry.run(() => (++attempts, Promise.reject(storage())), () => {}, (err) => failed.push(err));
    await settle();
    expect(attempts).toBe(2);
    expect(failed).toHaveLength(1);
  });
});
