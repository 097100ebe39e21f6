import { type PublishedEvent } from '@baton/protocol';
import { groupDigits, percent, shortWriterId } from '../format/numbers.ts';

interface CachePerf {
  readonly calls: number;
  readonly hitRate: number;
}

/**
 * Turns a session's published events into the demo's story lines, as they arrive. Remembers each writer's
 * `writer.cache_perf` (published just before `writer.settled`) to print it with the settlement, and tracks which
 * writers started but have not settled yet.
 */
export class DemoNarrator {
  readonly #sessionId: string;
  readonly #print: (line: string) => void;
  readonly #perf = new Map<string, CachePerf>();
  readonly #open = new Set<string>();
  #waiters: (() => void)[] = [];
  crossings = 0;
  settled = 0;
  successes = 0;

  constructor(sessionId: string, print: (line: string) => void) {
    this.#sessionId = sessionId;
    this.#print = print;
  }

  /** Number of writers started and not settled yet (as far as the events seen so far tell). */
  get openWriters(): number {
    return this.#open.size;
  }

  /** Resolves once every writer seen starting has been seen settling. */
  whenWritersSettled(): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #w(id: string): string {
    return shortWriterId(id, this.#sessionId);
  }

  handle(event: PublishedEvent): void {
    switch (event.type) {
      case 'threshold.crossed':
        this.crossings++;
        this.#print(`⟶ threshold ${groupDigits(event.threshold)} crossed at ${groupDigits(event.tokens)} tokens`);
        return;
      case 'writer.started':
        this.#open.add(event.writer_id);
        this.#print(
          `✎ writer ${this.#w(event.writer_id)} started (${event.mode} mode, covers up to ${event.covers_up_to}, trigger ${event.trigger})` +
            (event.reason !== undefined ? ` — ${event.reason}` : ''),
        );
        return;
      case 'writer.queued':
        this.#print('… writer queued behind the running one');
        return;
      case 'writer.reentered':
        this.#print(`↺ writer ${this.#w(event.writer_id)} re-entered (${event.kind}, iteration ${event.iteration})`);
        return;
      case 'writer.cache_perf':
        this.#perf.set(event.writer_id, { calls: event.num_llm_calls, hitRate: event.cache_hit_rate });
        return;
      case 'writer.settled': {
        const perf = this.#perf.get(event.writer_id);
        const mark = event.outcome === 'success' ? '✓' : '✗';
        const failure = event.failure !== undefined ? ` (${event.failure.kind})` : '';
        const facts = [`${event.outcome}${failure}`, `watermark ${event.watermark ?? '–'}`];
        if (perf !== undefined) facts.push(`${perf.calls} LLM call${perf.calls === 1 ? '' : 's'}`, `cache hit ${percent(perf.hitRate)}`);
        this.#print(`${mark} writer ${this.#w(event.writer_id)} settled: ${facts.join(', ')}`);
        this.settled++;
        if (event.outcome === 'success') this.successes++;
        this.#open.delete(event.writer_id);
        if (this.#open.size === 0) for (const resolve of this.#waiters.splice(0)) resolve();
        return;
      }
      case 'rebuild.completed':
        return; // the demo asked for the rebuild and prints its reply
      case 'status':
        return; // "Writing checkpoint…" / idle: the writer lines already tell it
    }
  }
}
