import { JetStreamApiError } from '@nats-io/jetstream';
import { ClusterError } from './cluster-error.ts';

/**
 * Why a daemon could not join its cluster, as a stable code:
 * - `jetstream_disabled`: the NATS server it is connected to runs without JetStream;
 * - `replicas_above_cluster`: `replicas` is more than the deployment has (JetStream runs on one server, not clustered);
 * - `not_enough_servers`: JetStream found fewer servers than `replicas` to place the log and bucket on (not every
 *   server is up yet, or `replicas` is above the cluster's size);
 * - `permission_denied`: the NATS user may not use the JetStream API;
 * - `no_quorum`: JetStream did not answer (in a cluster: no meta leader yet, fewer than a majority of servers up);
 * - `jetstream_error`: JetStream refused with another error (its code in the message);
 * - `join_failed`: anything else.
 */
export type JoinFailureCode = 'jetstream_disabled' | 'replicas_above_cluster' | 'not_enough_servers' | 'permission_denied' | 'no_quorum' | 'jetstream_error' | 'join_failed';

export interface JoinFailure {
  readonly code: JoinFailureCode;
  /** One sentence an operator can act on. */
  readonly message: string;
}

/** What the NATS server said about itself when the connection was made (its INFO). */
export interface ServerFacts {
  readonly jetstream?: boolean;
  /** Cluster name; absent on a server that is not clustered. */
  readonly cluster?: string;
  /** Client URLs of the cluster's servers this server knows of. */
  readonly connect_urls?: readonly string[];
  readonly server_name?: string;
  readonly server_id?: string;
}

/** JetStream's error codes the join tells apart. */
const REPLICAS_NOT_CLUSTERED = 10074;
const NO_SUITABLE_PEERS = 10005;
const INSUFFICIENT_RESOURCES = 10023;
const CLUSTER_NOT_AVAILABLE = 10008;
const NOT_ENABLED_FOR_ACCOUNT = 10039;

/** The error a retry wrapper gave up with carries the last real one as its cause. */
function rootOf(err: unknown): unknown {
  let e = err;
  while (e instanceof ClusterError && e.code === 'unavailable' && e.cause !== undefined) e = e.cause;
  return e;
}

/** Names the real cause of a failed join attempt from the error and what the server said about itself. */
export function joinFailureOf(err: unknown, server: ServerFacts, replicas: number): JoinFailure {
  const e = rootOf(err);
  const text = e instanceof Error ? e.message : String(e);
  const name = e instanceof Error ? e.name : '';
  // A server without a configured name reports its id as its name: not worth printing.
  const named = server.server_name !== undefined && server.server_name !== server.server_id;
  const where = named ? `the NATS server ${String(server.server_name)}` : 'the NATS server';
  if (e instanceof JetStreamApiError) {
    const code = e.code;
    if (code === REPLICAS_NOT_CLUSTERED) {
      return { code: 'replicas_above_cluster', message: `--replicas ${replicas} is more than this NATS deployment has: JetStream runs on one server, not clustered (JetStream error ${code}: ${text}); use --replicas 1 or a JetStream cluster of at least ${replicas} servers` };
    }
    if (code === NO_SUITABLE_PEERS || code === INSUFFICIENT_RESOURCES) {
      const known = server.connect_urls?.length;
      const seen = known !== undefined && known > 0 ? `; ${known} servers of the cluster are known now` : '';
      return { code: 'not_enough_servers', message: `JetStream has fewer servers than --replicas ${replicas} to place the cluster's log on (JetStream error ${code}: ${text})${seen}: waiting for more servers to join, or lower --replicas` };
    }
    if (code === CLUSTER_NOT_AVAILABLE) {
      // "JetStream system temporarily unavailable": a clustered server without a meta leader.
      return { code: 'no_quorum', message: `JetStream has no leader yet${server.cluster !== undefined ? ` in cluster ${server.cluster}` : ''} (JetStream error ${code}: ${text}): waiting for a majority of its servers` };
    }
    if (code === NOT_ENABLED_FOR_ACCOUNT) {
      return { code: 'jetstream_disabled', message: `JetStream is not enabled for this NATS user's account (JetStream error ${code}): enable it for the account in the server's configuration` };
    }
    return { code: 'jetstream_error', message: `JetStream refused (error ${code}): ${text}` };
  }
  if (name === 'PermissionViolationError' || /permissions violation/i.test(text)) {
    return { code: 'permission_denied', message: `the NATS user may not use JetStream (${text}): allow it to publish to $JS.API.> and $KV.> and to subscribe to _INBOX.>` };
  }
  if (name === 'JetStreamNotEnabled' || /not enabled/i.test(text)) {
    if (server.jetstream !== true) return { code: 'jetstream_disabled', message: `JetStream is not enabled on ${where}: start nats-server with -js (or a jetstream block in its configuration)` };
    return { code: 'no_quorum', message: `JetStream has no leader yet${server.cluster !== undefined ? ` in cluster ${server.cluster}` : ''}: waiting for a majority of its servers` };
  }
  if (name === 'TimeoutError' || name === 'NoRespondersError' || /timeout|no responders/i.test(text)) {
    if (server.jetstream !== true) return { code: 'jetstream_disabled', message: `JetStream is not enabled on ${where}: start nats-server with -js (or a jetstream block in its configuration)` };
    if (server.cluster !== undefined) return { code: 'no_quorum', message: `JetStream did not answer: no quorum yet in cluster ${server.cluster} (a majority of its servers must be up)` };
    return { code: 'no_quorum', message: `JetStream did not answer (${text})` };
  }
  return { code: 'join_failed', message: text };
}
