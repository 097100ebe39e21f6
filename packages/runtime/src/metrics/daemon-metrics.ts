import type { PublishedEventBody, RuntimeStatusReply, RuntimeWorker } from '@baton/protocol';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { assertNever } from '../assert-never.ts';
import type { DaemonObserver, RequestAnswer } from '../daemon/daemon-observer.ts';

/** What the gauges read at each scrape: the daemon's `runtime.status` answer. */
export interface StatusSource {
  runtimeStatus(): Omit<RuntimeStatusReply, 'ok'>;
}

/** Buckets of request latencies: sub-millisecond appends up to rebuilds that wait minutes for a writer. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Buckets of writer runs and rebuilds: seconds to minutes. */
const RUN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Writers started but not settled that are remembered for their duration (a bound against writers that never settle here). */
const MAX_WRITERS_TIMED = 10_000;

/**
 * One daemon's Prometheus metrics in a registry of its own (so several daemons in one process never share a series):
 * counters and histograms fed by the daemon as its observer (requests answered, session events published), and
 * gauges read from its `runtime.status` at each scrape.
 */
export class DaemonMetrics implements DaemonObserver {
  readonly registry: Registry;
  readonly #requests: Counter<'verb' | 'code'>;
  readonly #requestSeconds: Histogram<'verb'>;
  readonly #appended: Counter;
  readonly #duplicates: Counter;
  readonly #rebuilds: Counter<'outcome'>;
  readonly #rebuildSeconds: Histogram<'outcome'>;
  readonly #thresholds: Counter;
  readonly #writersStarted: Counter<'mode' | 'trigger'>;
  readonly #writersSettled: Counter<'outcome' | 'failure_kind'>;
  readonly #writerSeconds: Histogram<'outcome'>;
  readonly #writerPromptTokens: Counter;
  readonly #writerCachedTokens: Counter;
  readonly #writerCalls: Counter;
  readonly #overWindow: Counter;
  /** When each running writer started (`performance.now()`), by writer id. */
  readonly #writerStarts = new Map<string, number>();
  #source: StatusSource | null = null;
  /** The status read for the scrape under way (every gauge of one scrape reads the same answer). */
  #scrape: Omit<RuntimeStatusReply, 'ok'> | null = null;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    this.#requests = new Counter({ name: 'baton_requests_total', help: 'Protocol requests answered, by verb and result code (ok or the error code).', labelNames: ['verb', 'code'], registers });
    this.#requestSeconds = new Histogram({ name: 'baton_request_duration_seconds', help: 'Time from a request arriving to its reply being sent, by verb.', labelNames: ['verb'], buckets: REQUEST_BUCKETS, registers });
    this.#appended = new Counter({ name: 'baton_appended_messages_total', help: 'Messages accepted by append requests (written to the event log).', registers });
    this.#duplicates = new Counter({ name: 'baton_duplicate_messages_total', help: 'Messages of append requests dropped as already recorded.', registers });
    this.#rebuilds = new Counter({ name: 'baton_rebuilds_total', help: 'Rebuild requests answered, by outcome.', labelNames: ['outcome'], registers });
    this.#rebuildSeconds = new Histogram({ name: 'baton_rebuild_duration_seconds', help: 'Time from a rebuild request to its answer, by outcome.', labelNames: ['outcome'], buckets: RUN_BUCKETS, registers });
    this.#thresholds = new Counter({ name: 'baton_thresholds_crossed_total', help: 'Threshold rungs crossed by sessions.', registers });
    this.#writersStarted = new Counter({ name: 'baton_writers_started_total', help: 'Checkpoint writers started, by mode and trigger.', labelNames: ['mode', 'trigger'], registers });
    this.#writersSettled = new Counter({ name: 'baton_writers_settled_total', help: 'Checkpoint writers settled, by outcome and failure kind (none for a success).', labelNames: ['outcome', 'failure_kind'], registers });
    this.#writerSeconds = new Histogram({ name: 'baton_writer_duration_seconds', help: 'Time from a writer starting to its settlement, by outcome.', labelNames: ['outcome'], buckets: RUN_BUCKETS, registers });
    this.#writerPromptTokens = new Counter({ name: 'baton_writer_prompt_tokens_total', help: "Prompt tokens of writers' model calls.", registers });
    this.#writerCachedTokens = new Counter({ name: 'baton_writer_cached_prompt_tokens_total', help: "Prompt tokens of writers' model calls read from the provider's cache.", registers });
    this.#writerCalls = new Counter({ name: 'baton_writer_llm_calls_total', help: 'Model calls made by writers.', registers });
    this.#overWindow = new Counter({
      name: 'baton_requests_over_window_total',
      help: "Agents' requests the provider counted above the model's window or refused as too long (never expected: rebuilt requests are fitted).",
      registers,
    });
    const status = (): Omit<RuntimeStatusReply, 'ok'> | null => this.#status();
    const gauge = (name: string, help: string, read: (s: Omit<RuntimeStatusReply, 'ok'>) => number | undefined): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const now = status();
          const value = now === null ? undefined : read(now);
          if (value !== undefined) this.set(value);
        },
      });
    };
    new Gauge({
      name: 'baton_daemon_info',
      help: 'Always 1; its daemon_id label is the id `baton status` shows for this daemon.',
      labelNames: ['daemon_id'],
      registers,
      collect() {
        const now = status();
        this.reset();
        if (now !== null) this.set({ daemon_id: now.daemon_id }, 1);
      },
    });
    gauge('baton_sessions_resident', 'Sessions in memory now.', (s) => s.sessions);
    gauge('baton_sessions_logged', 'Sessions in the event log (resident or not).', (s) => s.sessions_total);
    gauge('baton_sessions_quarantined', 'Sessions set aside because their log cannot be folded.', (s) => s.quarantined);
    gauge('baton_writers_running', 'Checkpoint writers running now.', (s) => s.writers.running);
    gauge('baton_writers_queued', 'Writer requests waiting for a running writer to settle.', (s) => s.writers.queued);
    gauge('baton_pool_threads', 'Worker threads hosting session and writer actors.', (s) => s.pool.threads);
    gauge('baton_pool_utilization_ratio', "Mean event-loop utilisation of the worker threads over about the last 10 s (0 to 1).", (s) => s.pool.utilization);
    gauge('baton_pool_worker_exits', 'Worker threads that died since the daemon started (each was replaced).', (s) => s.pool.worker_exits);
    const perWorker = (name: string, help: string, read: (w: RuntimeWorker) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['worker'],
        registers,
        collect() {
          const now = status();
          this.reset();
          for (const w of now?.pool.workers ?? []) this.set({ worker: String(w.host) }, read(w));
        },
      });
    };
    perWorker('baton_worker_utilization_ratio', "A worker thread's event-loop utilisation over about the last 10 s (0 to 1), by worker slot.", (w) => w.utilization);
    perWorker('baton_worker_sessions', 'Sessions placed on a worker thread, by worker slot.', (w) => w.sessions);
    perWorker('baton_worker_pending_calls', 'Calls sent to a worker thread it has not answered yet (its queue), by worker slot.', (w) => w.pending_calls);
    gauge('baton_log_streams', 'Streams in the event log (sessions, writers, memory commits).', (s) => s.log.streams);
    gauge('baton_log_bytes', 'Size of the event log data file (LMDB data.mdb).', (s) => s.log_bytes);
  }

  /** Starts reading the gauges from this daemon (until then they are absent from a scrape). */
  watch(source: StatusSource): void {
    this.#source = source;
  }

  /** The status of the scrape under way: read once, by the first gauge, and dropped once the scrape's turn is over. */
  #status(): Omit<RuntimeStatusReply, 'ok'> | null {
    if (this.#source === null) return null;
    if (this.#scrape === null) {
      this.#scrape = this.#source.runtimeStatus();
      queueMicrotask(() => (this.#scrape = null));
    }
    return this.#scrape;
  }

  requestAnswered(answer: RequestAnswer): void {
    this.#requests.inc({ verb: answer.verb, code: answer.code });
    this.#requestSeconds.observe({ verb: answer.verb }, answer.seconds);
    const body = answer.body;
    if (body === null) return;
    if (answer.verb === 'append') {
      this.#appended.inc(countOf(body['accepted']));
      this.#duplicates.inc(countOf(body['duplicates']));
    } else if (answer.verb === 'rebuild') {
      const outcome = typeof body['outcome'] === 'string' ? body['outcome'] : 'unknown';
      this.#rebuilds.inc({ outcome });
      this.#rebuildSeconds.observe({ outcome }, answer.seconds);
    }
  }

  requestsOverWindow(_sessionId: string, count: number): void {
    this.#overWindow.inc(count);
  }

  eventPublished(event: PublishedEventBody): void {
    switch (event.type) {
      case 'threshold.crossed':
        this.#thresholds.inc();
        return;
      case 'writer.started':
        this.#writersStarted.inc({ mode: event.mode, trigger: event.trigger });
        this.#writerStarts.set(event.writer_id, performance.now());
        if (this.#writerStarts.size > MAX_WRITERS_TIMED) this.#writerStarts.delete(this.#writerStarts.keys().next().value ?? '');
        return;
      case 'writer.settled': {
        this.#writersSettled.inc({ outcome: event.outcome, failure_kind: event.failure?.kind ?? 'none' });
        const started = this.#writerStarts.get(event.writer_id);
        this.#writerStarts.delete(event.writer_id);
        // A writer settled at load (the previous process ran it) has no start here: it is counted, not timed.
        if (started !== undefined) this.#writerSeconds.observe({ outcome: event.outcome }, (performance.now() - started) / 1000);
        return;
      }
      case 'writer.cache_perf':
        this.#writerPromptTokens.inc(event.total_input_tokens);
        this.#writerCachedTokens.inc(event.cache_read_tokens);
        this.#writerCalls.inc(event.num_llm_calls);
        return;
      case 'writer.queued':
      case 'writer.reentered':
      case 'status':
      case 'rebuild.completed':
        return;
      default:
        assertNever(event, 'session event');
    }
  }
}

function countOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
