import type { EventLoopUtilization } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';

/** How far back a utilisation looks at most once reads are frequent. */
const WINDOW_MS = 10_000;
/** Reads closer together than this share their base sample. */
const SAMPLE_EVERY_MS = 1_000;

interface Sample {
  readonly at: number;
  readonly elu: EventLoopUtilization;
}

/**
 * The event-loop utilisation of worker threads, as each thread's own `performance.eventLoopUtilization` counts it
 * (read from the main thread through `Worker.performance`, so a thread too busy to answer a message is still
 * measured): the share of the recent past its loop spent running code rather than waiting. Without a timer: each read
 * keeps a sample, and a utilisation is measured from the oldest sample that is still within about ten seconds (or,
 * when reads are rarer, from the previous read; at first from the thread's start).
 */
export class ThreadLoad {
  readonly #samples = new Map<number, Sample[]>();
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** The utilisation of `worker` in [0, 1]. */
  utilization(worker: Worker): number {
    const now = this.#now();
    const current = worker.performance.eventLoopUtilization();
    let samples = this.#samples.get(worker.threadId);
    if (samples === undefined) {
      samples = [];
      this.#samples.set(worker.threadId, samples);
    }
    const base = samples[0];
    const share = base === undefined ? current.utilization : worker.performance.eventLoopUtilization(current, base.elu).utilization;
    const newest = samples.at(-1);
    if (newest === undefined || now - newest.at >= SAMPLE_EVERY_MS) samples.push({ at: now, elu: current });
    // Keep the newest sample at least a window old as the base, and those after it.
    while (samples.length > 1 && now - (samples[1]?.at ?? now) >= WINDOW_MS) samples.shift();
    return Number.isFinite(share) ? Math.min(1, Math.max(0, share)) : 0;
  }

  /** Forgets threads that are gone. */
  keepOnly(threadIds: ReadonlySet<number>): void {
    for (const id of this.#samples.keys()) if (!threadIds.has(id)) this.#samples.delete(id);
  }
}
