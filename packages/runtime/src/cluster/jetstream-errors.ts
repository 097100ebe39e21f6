import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { ClosedConnectionError, DrainingConnectionError } from '@nats-io/nats-core';

/** The subject already holds a record (a write with expected subject sequence 0), or a KV `create` found its key. */
export function isWrongLastSequence(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence;
}

/**
 * Whether retrying the same request (same message id) may succeed: timeouts, no responders and "JetStream not
 * enabled" (which, in a cluster, is what a client sees while a stream has no leader), and server-side 5xx answers.
 * A closed connection, a refused write and a bad request are not.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof ClosedConnectionError || err instanceof DrainingConnectionError) return false;
  if (err instanceof JetStreamApiError) return err.status >= 500 || err.status === 408;
  if (!(err instanceof Error)) return false;
  return err.name === 'TimeoutError' || err.name === 'NoRespondersError' || err.name === 'RequestError' || err.name === 'JetStreamNotEnabled' || /timeout|no responders|not enabled/i.test(err.message);
}
