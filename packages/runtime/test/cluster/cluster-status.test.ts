import type { StreamInfo } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { assetStatusOf } from '../../src/cluster/cluster-status.ts';

/** A stream info as nats-server 2.9 sends it (JSON), with only the fields the status reads. */
function info(cluster: unknown): StreamInfo {
  return JSON.parse(JSON.stringify({ config: { name: 'BATON_LOG' }, state: { messages: 12, bytes: 3400 }, cluster })) as StreamInfo;
}

describe('assetStatusOf: a replicated asset as JetStream describes it', () => {
  it('gives an in-step replica (JetStream leaves out its lag and offline) lag 0, current, online', () => {
    const a = assetStatusOf(info({ name: 'c', leader: 'n1', replicas: [{ name: 'n2', current: true, active: 1 }, { name: 'n3', current: false, active: 1, lag: 7 }] }));
    expect(a).toEqual({
      name: 'BATON_LOG',
      messages: 12,
      bytes: 3400,
      electing: false,
      replicas: [
        { server: 'n1', leader: true, current: true, offline: false, lag: 0 },
        { server: 'n2', leader: false, current: true, offline: false, lag: 0 },
        { server: 'n3', leader: false, current: false, offline: false, lag: 7 },
      ],
    });
  });

  it('reports an election when replicas are listed but no leader is named; one server without a cluster is not one', () => {
    expect(assetStatusOf(info({ name: 'c', replicas: [{ name: 'n2', current: false, active: 1 }, { name: 'n3', current: false, offline: true, active: 1 }] })).electing).toBe(true);
    expect(assetStatusOf(info(undefined))).toMatchObject({ electing: false, replicas: [] });
  });
});
