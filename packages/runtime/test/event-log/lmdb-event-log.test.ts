import { describe, expect, it } from 'vitest';
import type { EventLog } from '@baton/log-schema';
import { LmdbEventLog, openLmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { describeEventLogContract, rec } from './event-log-contract.ts';
import { makeTempDir, removeDir } from './temp-dir.ts';

interface TransactionLike {
  transaction: (body: () => unknown) => Promise<unknown>;
}

/**
 * Makes the next transaction of `log` fail without writing anything, as lmdb-js does when a commit fails: the
 * environment's `transaction` rejects once, with the error lmdb-js gives (its cause in `commitError`), without running
 * the body.
 */
function failNextCommit(log: EventLog): void {
  const env = (log as unknown as { env: TransactionLike }).env;
  const cause = Promise.reject(Object.assign(new Error('No space left on device'), { code: 28 }));
  cause.catch(() => {});
  env.transaction = () => {
    // once: the environment's own method again from the next flush on
    delete (env as Partial<TransactionLike>).transaction;
    return Promise.reject(Object.assign(new Error('Commit failed (see commitError for details)'), { commitError: cause }));
  };
}

describeEventLogContract('LmdbEventLog', () => {
  const dir = makeTempDir();
  return {
    open: () => LmdbEventLog.open({ path: dir }),
    durable: true,
    failNextCommit,
    dispose: () => removeDir(dir),
  };
});

describe('LmdbEventLog specifics', () => {
  it('rejects the appends of a commit that failed for want of storage with unavailable, reason storage, naming the cause', async () => {
    const dir = makeTempDir();
    try {
      const log = LmdbEventLog.open({ path: dir });
      failNextCommit(log);
      await expect(log.append('s', [rec('t', 'x')])).rejects.toMatchObject({
        code: 'unavailable',
        details: { reason: 'storage' },
        message: expect.stringMatching(/could not write durably \(No space left on device, 28\)/) as unknown,
      });
      expect(await log.append('s', [rec('t', 'y')])).toEqual([{ seq: 1, duplicate: false }]);
      await log.close();
    } finally {
      removeDir(dir);
    }
  });

  it('opens through openLmdbEventLog with a map size and creates the directory', async () => {
    const dir = makeTempDir();
    try {
      const log = openLmdbEventLog({ path: `${dir}/nested/events`, mapSize: 1 << 20 });
      expect(await log.append('s', [rec('t', 'x'.repeat(4 << 20))])).toEqual([{ seq: 1, duplicate: false }]);
      expect(log.lastSeq('s')).toBe(1);
      await log.close();
    } finally {
      removeDir(dir);
    }
  });

  it('commits appends issued in one turn as one transaction', async () => {
    const dir = makeTempDir();
    const log = LmdbEventLog.open({ path: dir });
    try {
      const internals = log as unknown as { commitBatch: (batch: unknown[]) => Promise<void> };
      const original = internals.commitBatch.bind(log);
      const batchSizes: number[] = [];
      internals.commitBatch = (batch) => {
        batchSizes.push(batch.length);
        return original(batch);
      };
      await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(`s${i % 7}`, [rec('t', i)])));
      expect(batchSizes).toEqual([200]);
      // while a transaction is in flight, new appends gather into the next one
      const first = log.append('s0', [rec('t', 'a')]);
      await new Promise((resolve) => setImmediate(resolve));
      const later = Array.from({ length: 30 }, (_, i) => log.append('s1', [rec('t', i)]));
      await Promise.all([first, ...later]);
      expect(batchSizes.slice(1)).toEqual([1, 30]);
    } finally {
      await log.close();
      removeDir(dir);
    }
  });

  it('rejects stream names and msgIds that would not fit an LMDB key', async () => {
    const dir = makeTempDir();
    const log = LmdbEventLog.open({ path: dir });
    try {
      await expect(log.append('s'.repeat(513), [rec('t', 1)])).rejects.toThrow(RangeError);
      await expect(log.append('s', [rec('t', 1, 'm'.repeat(1025))])).rejects.toThrow(RangeError);
      const longest = 'é'.repeat(256); // 512 UTF-8 bytes
      expect(await log.append(longest, [rec('t', 1, '😀'.repeat(256))])).toEqual([{ seq: 1, duplicate: false }]);
      expect(await log.append(longest, [rec('t', 1, '😀'.repeat(256))])).toEqual([{ seq: 1, duplicate: true }]);
      expect([...log.streams()]).toEqual([longest]);
    } finally {
      await log.close();
      removeDir(dir);
    }
  });

  it('reads a long stream with a bounded range and keeps seq order past 2^8, 2^16 boundaries', async () => {
    const dir = makeTempDir();
    const log = LmdbEventLog.open({ path: dir });
    try {
      const n = 70_000;
      const pending: Promise<unknown>[] = [];
      for (let i = 0; i < n; i += 5000) {
        pending.push(log.append('long', Array.from({ length: Math.min(5000, n - i) }, (_, j) => rec('t', i + j))));
      }
      await Promise.all(pending);
      let expectedSeq = 1;
      for (const r of log.read('long')) {
        expect(r.seq).toBe(expectedSeq);
        expect(r.payload).toBe(expectedSeq - 1);
        expectedSeq++;
      }
      expect(expectedSeq - 1).toBe(n);
      expect([...log.read('long', { from: 65_535, to: 65_537 })].map((r) => r.seq)).toEqual([65_535, 65_536, 65_537]);
    } finally {
      await log.close();
      removeDir(dir);
    }
   }, 60_000);
});
