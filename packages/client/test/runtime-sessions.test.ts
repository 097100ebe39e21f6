import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RuntimeSessionsReply } from '@baton/protocol';
import { BatonClient } from '../src/baton-client.ts';
import { MemoryTransport } from '../src/transport/memory-transport.ts';
import { AT, runtimeStatusReply, state } from '../../protocol/test/fixtures.ts';
import { startFakeDaemon } from './fake-daemon.ts';

/* `BatonClient.runtimeSessions` (additive to v1) and the figures `runtimeStatus` gained, against a scripted daemon. */

const page: RuntimeSessionsReply = {
  ok: true,
  daemon_id: 'd-1',
  sessions: [
    { session_id: 's1', project_id: 'p', model: 'gpt-4o', opened_at: AT, resident: true, quarantined: false, state, closed: false, last_outcome: null },
  ],
  next: 's1',
};

let transport: MemoryTransport;
beforeEach(() => {
  transport = new MemoryTransport();
});
afterEach(async () => {
  await transport.close();
});

describe('BatonClient.runtimeSessions', () => {
  it.each(['msgpack', 'json'] as const)('sends the page request to <prefix>.v1.runtime.sessions and returns the parsed reply (%s)', async (encoding) => {
    const fake = startFakeDaemon(transport, () => page, 'acme');
    const client = new BatonClient(transport, { prefix: 'acme', encoding });
    expect(await client.runtimeSessions({ limit: 1 })).toEqual(page);
    expect(await client.runtimeSessions({ limit: 1, after: 's1' })).toEqual(page);
    expect(await client.runtimeSessions()).toEqual(page);
    expect(fake.seen.map((r) => [r.subject, r.body])).toEqual([
      ['acme.v1.runtime.sessions', { limit: 1 }],
      ['acme.v1.runtime.sessions', { limit: 1, after: 's1' }],
      ['acme.v1.runtime.sessions', {}],
    ]);
  });

  it('reports a reply that breaks the schema as invalid_reply', async () => {
    startFakeDaemon(transport, () => ({ ok: true, daemon_id: 'd-1', sessions: [{ session_id: 's1' }] }));
    await expect(new BatonClient(transport).runtimeSessions()).rejects.toMatchObject({ name: 'BatonRequestError', code: 'invalid_reply' });
  });

  it('keeps the figures runtime.status gained', async () => {
    const extended = { ...runtimeStatusReply, sessions_total: 3, quarantined: 0, rss_bytes: 52_428_800, log_bytes: 1_048_576 };
    startFakeDaemon(transport, () => extended);
    expect(await new BatonClient(transport).runtimeStatus()).toEqual(extended);
  });
});
