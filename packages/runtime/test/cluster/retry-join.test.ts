import { JetStreamApiError } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { joinFailureOf, type JoinFailure } from '../../src/cluster/join-failure.ts';
import { retryJoin } from '../../src/cluster/retry-join.ts';
import type { Clock, TimerHandle } from '../../src/time/clock.ts';

/** Timers that fire at once (on the next microtask), recording the delays asked for. */
function instantClock(delays: number[]): Pick<Clock, 'setTimeout' | 'clearTimeout'> {
  return {
    setTimeout: (fn, ms): TimerHandle => {
      delays.push(ms);
      queueMicrotask(fn);
      return { id: delays.length };
    },
    clearTimeout: () => {},
  };
}

/** A failure's code, and a part of its message. */
function expectFailure(failure: JoinFailure, code: JoinFailure['code'], part: string): void {
  expect(failure.code).toBe(code);
  expect(failure.message).toContain(part);
}

const classify = (err: unknown): JoinFailure => ({ code: 'join_failed', message: String(err) });

describe('retryJoin: join attempts until one succeeds, stopped at once by an abort', () => {
  it('tries again after every failure with a doubling, capped delay and tells each cause', async () => {
    const delays: number[] = [];
    const told: string[] = [];
    let n = 0;
    const joined = await retryJoin({
      attempt: () => (++n < 6 ? Promise.reject(new Error(`no ${n}`)) : Promise.resolve('joined')),
      classify,
      onFailure: (f, attempts) => told.push(`${attempts}:${f.message}`),
      signal: new AbortController().signal,
      discard: () => Promise.resolve(),
      delayMs: 100,
      maxDelayMs: 500,
      clock: instantClock(delays),
    });
    expect(joined).toBe('joined');
    expect(delays).toEqual([100, 200, 400, 500, 500]);
    expect(told).toEqual(['1:Error: no 1', '2:Error: no 2', '3:Error: no 3', '4:Error: no 4', '5:Error: no 5']);
  });

  it('resolves null as soon as it is aborted during an attempt, and undoes that attempt if it succeeds later', async () => {
    const abort = new AbortController();
    let finish: (v: string) => void = () => {};
    const discarded: string[] = [];
    let undone: () => void = () => {};
    const wasUndone = new Promise<void>((resolve) => (undone = resolve));
    const waiting = retryJoin({
      attempt: () => new Promise<string>((resolve) => (finish = resolve)),
      classify,
      onFailure: () => {},
      signal: abort.signal,
      discard: (late) => {
        discarded.push(late);
        undone();
        return Promise.resolve();
      },
      delayMs: 100,
      maxDelayMs: 100,
      clock: instantClock([]),
    });
    abort.abort();
    expect(await waiting).toBeNull();
    finish('late join');
    await wasUndone;
    expect(discarded).toEqual(['late join']);
  });
});

describe('joinFailureOf: the real cause of a failed join', () => {
  const api = (code: number, status: number, description: string): JetStreamApiError => new JetStreamApiError({ code: status, err_code: code, description });

  it('tells replicas above a single server (10074), too few servers to place on (10005) and other JetStream refusals apart', () => {
    expectFailure(joinFailureOf(api(10074, 500, 'replicas > 1 not supported in non-clustered mode'), { jetstream: true }, 3), 'replicas_above_cluster', '--replicas 3 is more than this NATS deployment has');
    expectFailure(joinFailureOf(api(10005, 400, 'no suitable peers for placement'), { jetstream: true, cluster: 'c', connect_urls: ['a', 'b'] }, 3), 'not_enough_servers', '2 servers of the cluster are known now');
    expect(joinFailureOf(api(10052, 500, 'something else'), { jetstream: true }, 1)).toMatchObject({ code: 'jetstream_error', message: 'JetStream refused (error 10052): something else' });
    // A clustered server without a meta leader answers this rather than timing out.
    expectFailure(joinFailureOf(api(10008, 503, 'JetStream system temporarily unavailable'), { jetstream: true, cluster: 'prod' }, 3), 'no_quorum', 'JetStream has no leader yet in cluster prod (JetStream error 10008');
    expect(joinFailureOf(api(10039, 503, 'jetstream not enabled for account'), { jetstream: true }, 1).code).toBe('jetstream_disabled');
  });

  it('tells a server without JetStream from a cluster without a leader, and names a permission refusal', () => {
    const timeout = Object.assign(new Error('timeout'), { name: 'TimeoutError' });
    expect(joinFailureOf(timeout, {}, 1).code).toBe('jetstream_disabled');
    expect(joinFailureOf(timeout, { jetstream: true, cluster: 'prod' }, 3)).toEqual({ code: 'no_quorum', message: 'JetStream did not answer: no quorum yet in cluster prod (a majority of its servers must be up)' });
    const notEnabled = Object.assign(new Error('jetstream is not enabled'), { name: 'JetStreamNotEnabled' });
    expectFailure(joinFailureOf(notEnabled, { jetstream: false, server_name: 'n1', server_id: 'X' }, 1), 'jetstream_disabled', 'not enabled on the NATS server n1');
    expect(joinFailureOf(notEnabled, { jetstream: true, cluster: 'prod' }, 3).code).toBe('no_quorum');
    const denied = Object.assign(new Error('Permissions Violation for Publish to "$JS.API.INFO"'), { name: 'RequestError' });
    expectFailure(joinFailureOf(denied, { jetstream: true }, 1), 'permission_denied', '$JS.API.>');
  });
});
