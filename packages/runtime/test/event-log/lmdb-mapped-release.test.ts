import { describe, expect, it } from 'vitest';
import type { RootDatabase } from 'lmdb';
import type { StoredRecord } from '@baton/log-schema';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { MappedPages } from '../../src/event-log/mapped-pages.ts';
import { describeEventLogContract, rec } from './event-log-contract.ts';
import { makeTempDir, removeDir } from './temp-dir.ts';

/** A probe whose resident file bytes grow by 1 MiB per call: with a small budget every commit makes a reopen due. */
const growing = (): (() => number) => {
  let bytes = 0;
  return () => (bytes += 2 ** 20);
};

// the whole contract again, with the environment reopened before (nearly) every transaction
describeEventLogContract('LmdbEventLog reopening after every commit', () => {
  const dir = makeTempDir();
  return {
    open: () => LmdbEventLog.open({ path: dir, releaseMappedBytes: 1, residentFileProbe: growing() }),
    durable: true,
    dispose: () => removeDir(dir),
  };
});

describe('LmdbEventLog releasing mapped pages', () => {
  it('reopens under concurrent appends and reads, losing and repeating nothing', async () => {
    const dir = makeTempDir();
    const log = LmdbEventLog.open({ path: dir, releaseMappedBytes: 1, residentFileProbe: growing() });
    try {
      const streams = Array.from({ length: 8 }, (_, i) => `session/s${i}`);
      const reads: Promise<number>[] = [];
      for (let round = 0; round < 40; round++) {
        await Promise.all(streams.map((stream) => log.append(stream, [rec('t', { round, body: 'x'.repeat(300) })])));
        // reads from other macrotasks, while the next flush (and reopen) may be under way
        for (const stream of streams) {
          reads.push(new Promise((resolve) => setImmediate(() => resolve([...log.read(stream)].length))));
        }
      }
      const counts = await Promise.all(reads);
      expect(counts.every((n) => n >= 1 && n <= 40)).toBe(true);
      expect(log.mappedReleases).toBeGreaterThan(5);
      for (const stream of streams) {
        expect([...log.read(stream)].map((r) => (r.payload as { round: number }).round)).toEqual(
          Array.from({ length: 40 }, (_, i) => i),
        );
      }
      expect(log.lastGlobalSeq()).toBe(320);
      expect([...log.readGlobal()].length).toBe(320);
    } finally {
      await log.close();
      removeDir(dir);
    }
  });

  it('serves reads that come while a release is still closing, reopening at once', async () => {
    const dir = makeTempDir();
    // a close that takes a few event-loop turns, as lmdb-js's may while a sync or an async read is pending
    const slowClose = async (env: RootDatabase): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      await env.close();
    };
    const log = LmdbEventLog.open({ path: dir, releaseMappedBytes: 1, residentFileProbe: growing(), closeForRelease: slowClose });
    try {
      const seen: number[] = [];
      for (let round = 0; round < 10; round++) {
        await log.append('s', [rec('t', round)]);
        // a read every turn for a while: some land while a close is pending
        for (let turn = 0; turn < 10; turn++) {
          await new Promise((resolve) => setImmediate(resolve));
          seen.push([...log.read('s')].length);
          expect(log.keySeq('s', 'none')).toBeUndefined();
        }
      }
      expect(log.earlyMappedReopens).toBeGreaterThan(0);
      expect(seen.every((n) => n >= 1 && n <= 10)).toBe(true);
      await log.append('s', [rec('t', 10)]);
      expect([...log.read('s')].map((r) => r.payload)).toEqual(Array.from({ length: 11 }, (_, i) => i));
    } finally {
      await log.close();
    }
    const again = LmdbEventLog.open({ path: dir });
    try {
      expect(again.lastSeq('s')).toBe(11);
    } finally {
      await again.close();
      removeDir(dir);
    }
  });

  it('waits for an iteration under way before reopening, and reads after the reopen see everything', async () => {
    const dir = makeTempDir();
    const log = LmdbEventLog.open({ path: dir, releaseMappedBytes: 1, residentFileProbe: growing() });
    try {
      await log.append('s', [rec('t', 1), rec('t', 2)]);
      const before = log.mappedReleases;
      const iterator = log.read('s')[Symbol.iterator]();
      expect((iterator.next().value as StoredRecord | undefined)?.seq).toBe(1);
      // appends commit while the iteration is suspended; no reopen happens under it
      for (let i = 0; i < 5; i++) await log.append('s', [rec('t', 3 + i)]);
      expect(log.mappedReleases).toBe(before);
      expect((iterator.next().value as StoredRecord | undefined)?.seq).toBe(2);
      iterator.return?.();
      await log.append('s', [rec('t', 8)]);
      await log.append('s', [rec('t', 9)]);
      expect(log.mappedReleases).toBeGreaterThan(before);
      expect([...log.read('s')].map((r) => r.payload)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally {
      await log.close();
      removeDir(dir);
    }
  });

  it('reopens for pages touched by reads alone, on its own timer once idle', async () => {
    const dir = makeTempDir();
    const writer = LmdbEventLog.open({ path: dir, releaseMappedBytes: 0 });
    await writer.append('s', [rec('t', 1)]);
    await writer.close();
    const log = LmdbEventLog.open({ path: dir, readOnly: true, releaseMappedBytes: 1, residentFileProbe: growing() });
    try {
      expect([...log.read('s')].length).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(log.mappedReleases).toBeGreaterThanOrEqual(1);
      expect([...log.read('s')].map((r) => r.payload)).toEqual([1]);
    } finally {
      await log.close();
      removeDir(dir);
    }
  });

  it('keeps appends made during a reopen and settles flushed() and close() after it', async () => {
    const dir = makeTempDir();
    const log = LmdbEventLog.open({ path: dir, releaseMappedBytes: 1, residentFileProbe: growing() });
    await log.append('s', [rec('t', 0)]);
    const pending = Array.from({ length: 20 }, (_, i) => log.append('s', [rec('t', i + 1)]));
    await log.flushed();
    expect((await Promise.all(pending)).map(([r]) => r?.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    await log.close();
    const again = LmdbEventLog.open({ path: dir });
    try {
      expect(again.lastSeq('s')).toBe(21);
    } finally {
      await again.close();
      removeDir(dir);
    }
  });
});

describe('MappedPages', () => {
  it('after commits, is due once resident file bytes grew by the busy threshold, probing at a bounded cadence', () => {
    let resident = 100;
    const mapped = new MappedPages(64, () => resident); // busy threshold 4 × 64 = 256
    expect(mapped.committed(1)).toBe(false); // 1 byte < 64/16: not probed yet
    resident = 300;
    expect(mapped.committed(4)).toBe(false); // probed: grew 200 < 256
    resident = 360;
    expect(mapped.committed(4)).toBe(true); // grew 260
    expect(mapped.due()).toBe(true);
    mapped.released();
    expect(mapped.due()).toBe(false);
    resident = 400;
    expect(mapped.committed(4)).toBe(false); // 40 since the release
  });

  it('on the timer, is due at the budget once no commit came since the previous probe, else at the busy threshold', () => {
    let resident = 0;
    const mapped = new MappedPages(64, () => resident);
    mapped.committed(4);
    resident = 100;
    expect(mapped.check()).toBe(false); // a commit since the last check: busy, 100 < 256
    expect(mapped.check()).toBe(true); // idle now: 100 ≥ 64
    mapped.released();
    resident = 150;
    expect(mapped.check()).toBe(false); // idle, grew 50 < 64
  });

  it('counts written bytes where resident memory cannot be read, and never fires with a budget of 0', () => {
    const counting = new MappedPages(10, () => undefined);
    expect(counting.committed(6)).toBe(false);
    expect(counting.committed(6)).toBe(false); // 12 < busy threshold 40
    expect(counting.check()).toBe(false); // commits since the last check: busy
    expect(counting.check()).toBe(true); // idle: 12 ≥ 10
    const never = new MappedPages(0, () => 1e12);
    for (let i = 0; i < 1000; i++) expect(never.committed(1e6)).toBe(false);
    expect(never.check()).toBe(false);
  });
});
