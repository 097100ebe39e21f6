import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's own metrics in a registry of their own: CPU, resident memory, heap, open handles, garbage collection
 * and event-loop delay (`nodejs_eventloop_lag_seconds` and its percentiles, sampled every `eventLoopResolutionMs`).
 * One per process serving metrics: they describe the process, whatever daemon or gateway runs in it.
 */
export function processMetrics(eventLoopResolutionMs = 10): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: eventLoopResolutionMs });
  return registry;
}
