import { describe, expect, it } from 'vitest';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { StreamCounts, streamKind } from '../../src/event-log/stream-counts.ts';
import { rec } from './event-log-contract.ts';
import { makeTempDir, removeDir } from './temp-dir.ts';

/** What a walk over every stream name says. */
const walked = (log: LmdbEventLog): Map<string, number> => StreamCounts.of(log.streams()).snapshot();

describe('stream counts', () => {
  it('names a kind by the part up to the first slash', () => {
    expect(streamKind('session/abc')).toBe('session/');
    expect(streamKind('writer/abc-w1')).toBe('writer/');
    expect(streamKind('memory/commits')).toBe('memory/');
    expect(streamKind('plain')).toBe('plain');
  });

  it('follows appends and removals without walking, and equals a walk at every step', async () => {
    const dir = makeTempDir();
    let log = LmdbEventLog.open({ path: dir });
    try {
      await log.append('session/a', [rec('t', 1)]);
      await log.append('writer/a-w1', [rec('t', 1)]);
      expect(log.streamCounts()).toEqual(new Map([['session/', 1], ['writer/', 1]]));
      // new streams, an existing one again, and several in one transaction
      await Promise.all([
        log.append('session/b', [rec('t', 1)]),
        log.append('session/a', [rec('t', 2)]),
        log.append('session/c', [rec('t', 1), rec('t', 2)]),
        log.append('memory/commits', [rec('t', 1)]),
      ]);
      expect(log.streamCounts()).toEqual(new Map([['session/', 3], ['writer/', 1], ['memory/', 1]]));
      expect(log.streamCounts()).toEqual(walked(log));
      await log.removeStream('session/b');
      await log.removeStream('session/never');
      expect(log.streamCounts()).toEqual(new Map([['session/', 2], ['writer/', 1], ['memory/', 1]]));
      await log.append('session/b', [rec('t', 1)]);
      expect(log.streamCounts().get('session/')).toBe(3);
      expect(log.streamCounts()).toEqual(walked(log));
      await log.close();
      log = LmdbEventLog.open({ path: dir });
      expect(log.streamCounts()).toEqual(new Map([['session/', 3], ['writer/', 1], ['memory/', 1]]));
      const reader = LmdbEventLog.open({ path: dir, readOnly: true });
      await log.append('session/d', [rec('t', 1)]);
      expect(reader.streamCounts().get('session/')).toBe(4);
      await reader.close();
    } finally {
      await log.close();
      removeDir(dir);
    }
  });
});
