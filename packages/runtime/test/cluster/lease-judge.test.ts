import { describe, expect, it } from 'vitest';
import { LeaseJudge } from '../../src/cluster/lease-judge.ts';

describe('LeaseJudge: staleness on the standby’s own monotonic clock', () => {
  it('judges a daemon stale once its heartbeat revision has not changed for the TTL', () => {
    const judge = new LeaseJudge(1_000);
    judge.observe('a', 5, 100);
    expect(judge.isStale('a', 1_099)).toBe(false);
    expect(judge.isStale('a', 1_100)).toBe(true);
    judge.observe('a', 6, 1_200);
    expect(judge.isStale('a', 2_199)).toBe(false);
  });

  it('tells how long until a daemon may be judged stale: the TTL from its newest revision, 0 once stale, Infinity while paused', () => {
    const judge = new LeaseJudge(1_000);
    judge.observe('a', 5, 100);
    expect(judge.msUntilStale('a', 400)).toBe(700);
    expect(judge.msUntilStale('a', 1_100)).toBe(0);
    judge.observe('a', 6, 1_200);
    expect(judge.msUntilStale('a', 1_300)).toBe(900);
    judge.kvFailed(1_300);
    expect(judge.msUntilStale('a', 5_000)).toBe(Number.POSITIVE_INFINITY);
    judge.kvOk(1_500);
    expect(judge.msUntilStale('a', 1_500)).toBe(900);
  });

  it('ignores a repeated or older revision (a late delivery does not refresh the lease)', () => {
    const judge = new LeaseJudge(1_000);
    judge.observe('a', 7, 0);
    judge.observe('a', 7, 900);
    judge.observe('a', 6, 950);
    expect(judge.isStale('a', 1_000)).toBe(true);
    expect(judge.revisionOf('a')).toBe(7);
  });

  it('counts a daemon never heard of from the first time it is asked about, never sooner', () => {
    const judge = new LeaseJudge(1_000);
    expect(judge.isStale('ghost', 5_000)).toBe(false);
    expect(judge.isStale('ghost', 5_999)).toBe(false);
    expect(judge.isStale('ghost', 6_000)).toBe(true);
  });

  it('takes a daemon that deleted its heartbeat to be gone at once, unless it beats again later', () => {
    const judge = new LeaseJudge(1_000);
    judge.observe('a', 3, 0);
    judge.left('a', 4);
    expect(judge.isStale('a', 1)).toBe(true);
    judge.left('a', 2);
    judge.observe('a', 5, 10);
    expect(judge.isStale('a', 11)).toBe(false);
  });

  it('stops every countdown while its own KV operations fail and resumes them where they were', () => {
    const judge = new LeaseJudge(1_000);
    judge.observe('a', 1, 0);
    judge.kvFailed(600);
    judge.kvFailed(700);
    expect(judge.paused).toBe(true);
    expect(judge.isStale('a', 5_000)).toBe(false);
    judge.kvOk(5_000);
    // 600 ms had elapsed before the pause: 400 more are needed.
    expect(judge.isStale('a', 5_399)).toBe(false);
    expect(judge.isStale('a', 5_400)).toBe(true);
  });

  it('reports every daemon with its age, the pause frozen, sorted by id', () => {
    const judge = new LeaseJudge(1_000);
    judge.observe('b', 1, 0);
    judge.observe('a', 1, 500);
    expect(judge.view(1_200)).toEqual([
      { daemonId: 'a', ageMs: 700, stale: false, gone: false },
      { daemonId: 'b', ageMs: 1_200, stale: true, gone: false },
    ]);
    judge.kvFailed(1_300);
    expect(judge.view(9_000).map((d) => [d.ageMs, d.stale])).toEqual([
      [800, false],
      [1_300, false],
    ]);
  });

  it('refuses a TTL that is not a positive number', () => {
    expect(() => new LeaseJudge(0)).toThrow(RangeError);
    expect(() => new LeaseJudge(Number.NaN)).toThrow(/positive/);
  });
});
