import type { ProviderApi } from '@baton/protocol';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * How the gateway handled a request: `recorded` (a conversation call recorded in a daemon session), `passthrough`
 * (not a conversation call of an API the gateway follows: forwarded as it is), `side_call` (no tools, or another
 * model: forwarded, not recorded), `compaction` (the agent's own compaction, answered from the checkpoint),
 * `unrecorded` (the daemon could not follow: forwarded without recording), `forbidden` (the session belongs to
 * another credential), `refused` (a request target that is not a provider API path: 400 or 404, nothing forwarded).
 */
export type GatewayRoute = 'recorded' | 'passthrough' | 'side_call' | 'compaction' | 'unrecorded' | 'forbidden' | 'refused';

/** What the gateway learns about one request as it handles it. */
export interface RequestTrack {
  api: ProviderApi | 'none';
  route: GatewayRoute;
  /** Whether it went upstream rewritten onto a rebuilt context. */
  rewritten: boolean;
}

/** Buckets of upstream latencies: a fast first token up to a model thinking for minutes. */
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** The gateway's Prometheus metrics, in a registry of their own. */
export class GatewayMetrics {
  readonly registry: Registry;
  readonly #requests: Counter<'api' | 'route' | 'status' | 'rewritten'>;
  readonly #upstreamHeaders: Histogram<'api' | 'status'>;
  readonly #upstreamSeconds: Histogram<'api' | 'status'>;
  readonly #recordingFailures: Counter;
  readonly #stalled: Gauge;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    this.#requests = new Counter({
      name: 'baton_gateway_requests_total',
      help: "Agent requests the gateway finished, by API, how it handled them, the HTTP status the agent got ('aborted' when the connection closed first) and whether they went upstream rewritten.",
      labelNames: ['api', 'route', 'status', 'rewritten'],
      registers,
    });
    this.#upstreamHeaders = new Histogram({
      name: 'baton_gateway_upstream_headers_seconds',
      help: "Time from sending a request upstream to the upstream's response headers, by API and upstream status.",
      labelNames: ['api', 'status'],
      buckets: UPSTREAM_BUCKETS,
      registers,
    });
    this.#upstreamSeconds = new Histogram({
      name: 'baton_gateway_upstream_duration_seconds',
      help: "Time from sending a request upstream to the end of the upstream's answer, by API and upstream status.",
      labelNames: ['api', 'status'],
      buckets: UPSTREAM_BUCKETS,
      registers,
    });
    this.#recordingFailures = new Counter({
      name: 'baton_gateway_recording_failures_total',
      help: "Appends of a session's messages the daemon did not take (down, refused): each is tried again with the session's next call.",
      registers,
    });
    this.#stalled = new Gauge({
      name: 'baton_gateway_recording_stalled_sessions',
      help: 'Sessions whose recording is stalled: messages the daemon did not take yet, tried again with their next call.',
      registers,
    });
  }

  /** Recording a session's messages failed; `stalls`: the session was recording until now. */
  recordingFailed(stalls: boolean): void {
    this.#recordingFailures.inc();
    if (stalls) this.#stalled.inc();
  }

  /** A stalled session's messages were recorded again. */
  recordingResumed(): void {
    this.#stalled.dec();
  }

  /** A request ended for the agent: with `status` (its HTTP status, or `aborted`). */
  requestEnded(track: RequestTrack, status: string): void {
    this.#requests.inc({ api: track.api, route: track.route, status, rewritten: String(track.rewritten) });
  }

  /** The upstream answered a request: its headers after `headersSeconds`, the whole answer after `seconds` (null: it broke off). */
  upstreamAnswered(api: ProviderApi | 'none', status: number, headersSeconds: number, seconds: number | null): void {
    this.#upstreamHeaders.observe({ api, status: String(status) }, headersSeconds);
    if (seconds !== null) this.#upstreamSeconds.observe({ api, status: String(status) }, seconds);
  }
}
