import { DaemonMetrics } from '@baton/runtime';
import { RuntimeStatusReplySchema, type Message, type RuntimeWorker } from '@baton/protocol';
import { parsePrometheusText } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusBlock } from '../packages/cli/src/format/runtime-format.ts';
import { MODEL } from './support/conversation.ts';
import { startHarness, type Harness } from './support/daemon-harness.ts';

/** Text that costs the worker real tokenisation work: distinct words, so no count is reused. */
function heavyText(seed: number): string {
  const words: string[] = [];
  for (let i = 0; i < 6_000; i++) words.push(`w${seed}x${i}y${(i * 7919 + seed) % 104_729}`);
  return words.join(' ');
}

/**
 * The pool's figures measure the workers' real work: with two sessions, one on each worker, the worker whose session
 * folds heavy appends shows a high event-loop utilisation over the same stretch in which the other, left idle,
 * shows almost none; `runtime.status`, `baton status` and `/metrics` carry each worker's utilisation, sessions and
 * waiting calls, and the pool's utilisation is their mean.
 */
describe('pool load', { timeout: 120_000 }, () => {
  let h: Harness;
  const metrics = new DaemonMetrics();
  beforeAll(async () => {
    h = await startHarness({ poolSize: 2, daemon: { checkpointDisabled: true, observer: metrics } });
    metrics.watch(h.daemon);
  });
  afterAll(async () => {
    await h.stop();
  });

  it('shows the busy worker busy and the idle one idle, in runtime.status, baton status and /metrics', async () => {
    const busy = (await h.client.open({ project_id: 'load', model: { ...MODEL, context_window: 10_000_000 } })).session_id;
    const idle = (await h.client.open({ project_id: 'load', model: { ...MODEL, context_window: 10_000_000 } })).session_id;
    // Both workers warmed up (a worker's first count loads the tokenizer) before the stretch measured.
    await h.client.append(busy, [{ id: 'warm', role: 'user', content: 'warm up' }]);
    await h.client.append(idle, [{ id: 'warm', role: 'user', content: 'warm up' }]);
    const placed = h.daemon.runtimeStatus().pool.workers ?? [];
    // one session on each worker (sessions go to the least-loaded one)
    expect(placed.map((w) => w.sessions)).toEqual([1, 1]);
    // both workers have reported their thread
    expect(placed.every((w) => w.thread_id !== null)).toBe(true);
    // The stretch measured starts here.
    h.daemon.runtimeStatus();
    let n = 0;
    for (let round = 0; round < 20; round++) {
      const batch: Message[] = [];
      for (let i = 0; i < 8; i++, n++) batch.push({ id: `heavy-${n}`, role: n % 2 === 0 ? 'user' : 'assistant', content: heavyText(n) });
      expect((await h.client.append(busy, batch)).accepted).toBe(8);
    }
    await h.client.append(idle, [{ id: 'one', role: 'user', content: 'hello' }]);
    const status = RuntimeStatusReplySchema.parse({ ok: true, ...h.daemon.runtimeStatus() });
    const workers = status.pool.workers ?? [];
    expect(workers).toHaveLength(2);
    // which worker holds which session: the busy session's is the one its appends kept busy
    const [first, second] = workers as [RuntimeWorker, RuntimeWorker];
    const [hot, cold] = first.utilization >= second.utilization ? [first, second] : [second, first];
    expect(hot.utilization).toBeGreaterThan(0.25);
    expect(hot.utilization).toBeGreaterThan(3 * cold.utilization);
    expect(status.pool.utilization).toBeCloseTo((hot.utilization + cold.utilization) / 2, 6);
    expect(workers.map((w) => w.pending_calls)).toEqual([0, 0]);
    expect(status.pool.worker_exits).toBe(0);

    // baton status: the pool line and one line per worker
    const lines = statusBlock(status, 'nats://test');
    expect(lines.find((l) => l.startsWith('pool'))).toMatch(/2 threads · \d+(\.\d+)?% busy/);
    expect(lines.filter((l) => /^ {2}#\d/.test(l))).toEqual(workers.map((w) => expect.stringMatching(new RegExp(`^  #${w.host} +thread ${w.thread_id} · \\d+(\\.\\d+)?% busy · 1 session · 0 calls waiting$`)) as unknown));

    // /metrics: per-worker gauges beside the pool's mean
    const { samples } = parsePrometheusText(await metrics.registry.metrics());
    const byWorker = (name: string): Record<string, number> => Object.fromEntries(samples.filter((s) => s.name === name).map((s) => [s.labels['worker'] ?? '', s.value]));
    const utilization = byWorker('baton_worker_utilization_ratio');
    expect(Object.keys(utilization).sort()).toEqual(['0', '1']);
    expect(Math.max(...Object.values(utilization))).toBeGreaterThan(0.25);
    expect(Math.max(...Object.values(utilization))).toBeGreaterThan(3 * Math.min(...Object.values(utilization)));
    expect(byWorker('baton_worker_sessions')).toEqual({ '0': 1, '1': 1 });
    expect(byWorker('baton_worker_pending_calls')).toEqual({ '0': 0, '1': 0 });
    expect(samples.find((s) => s.name === 'baton_pool_utilization_ratio')?.value).toBeGreaterThan(0.1);
    expect(samples.find((s) => s.name === 'baton_pool_worker_exits')?.value).toBe(0);
  });
});
