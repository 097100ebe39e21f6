import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startNatsServer, type NatsServerHandle } from '@baton/testing';
import { NatsTransport } from '../../src/transport/nats-transport.ts';
import { describeTransportContract } from './transport-contract.ts';

const MAX_PAYLOAD = 64 * 1024;
let server: NatsServerHandle | undefined;

beforeAll(async () => {
  server = await startNatsServer({ maxPayload: MAX_PAYLOAD });
});

afterAll(async () => {
  await server?.stop();
});

function url(): string {
  if (server === undefined) throw new Error('nats-server not started');
  return server.url;
}

describeTransportContract('nats', () => ({
  connect: () => NatsTransport.connect({ servers: url(), name: 'contract' }),
  maxPayload: MAX_PAYLOAD,
}));

describe('NatsTransport specifics', () => {
  it('takes max payload from the server info and exposes the connection', async () => {
    const t = await NatsTransport.connect({ servers: [url()], maxReconnectAttempts: 0 });
    expect(t.maxPayload).toBe(t.connection.info?.max_payload);
    expect(t.connection.info?.max_payload).toBe(MAX_PAYLOAD);
    await t.close();
    expect(t.connection.isClosed()).toBe(true);
  });

  it('rejects connect when no server listens', async () => {
    const port = await freePort();
    await expect(NatsTransport.connect({ servers: `nats://127.0.0.1:${port}`, maxReconnectAttempts: 0 })).rejects.toThrow();
  });
});
