import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsTransport } from '../../src/transport/nats-transport.ts';

/** A request/reply round trip on a connected transport (the connection really works). */
async function roundTrip(t: NatsTransport): Promise<string> {
  const sub = t.subscribe('echo', (msg) => msg.respond(msg.data));
  const reply = await t.request('echo', new TextEncoder().encode('hi'), { timeoutMs: 2_000 });
  sub.unsubscribe();
  return new TextDecoder().decode(reply.data);
}

describe('NatsTransport authentication and TLS against real nats-servers', () => {
  const servers: NatsServerHandle[] = [];
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-nats-tls-'));
  });

  afterAll(async () => {
    for (const s of servers) await s.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('connects with user and password, and is refused without them', async () => {
    const server = await startNatsServer({ args: ['--user', 'baton', '--pass', 's3cret'] });
    servers.push(server);
    await expect(NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0 })).rejects.toThrow(/authorization/i);
    await expect(NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0, auth: { user: 'baton', pass: 'wrong' } })).rejects.toThrow(/authorization/i);
    const t = await NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0, auth: { user: 'baton', pass: 's3cret' } });
    expect(await roundTrip(t)).toBe('hi');
    await t.close();
  });

  it('connects with a token', async () => {
    const server = await startNatsServer({ args: ['--auth', 'tok-123'] });
    servers.push(server);
    await expect(NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0, auth: { token: 'other' } })).rejects.toThrow(/authorization/i);
    const t = await NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0, auth: { token: 'tok-123' } });
    expect(await roundTrip(t)).toBe('hi');
    await t.close();
  });

  it('connects over TLS, trusting the CA it is given (and not without it)', async () => {
    const ca = join(dir, 'ca.pem');
    const caKey = join(dir, 'ca.key');
    const key = join(dir, 'server.key');
    const csr = join(dir, 'server.csr');
    const cert = join(dir, 'server.pem');
    const ext = join(dir, 'san.ext');
    const ssl = (...args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore' });
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', ca, '-days', '1', '-subj', '/CN=baton-test-ca');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=127.0.0.1');
    execFileSync('sh', ['-c', `printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > ${ext}`]);
    ssl('x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', cert, '-days', '1', '-extfile', ext);
    const server = await startNatsServer({ args: ['--tls', '--tlscert', cert, '--tlskey', key] });
    servers.push(server);
    await expect(NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0, tls: {} })).rejects.toThrow();
    const t = await NatsTransport.connect({ servers: server.url, maxReconnectAttempts: 0, tls: { caFile: ca } });
    expect(await roundTrip(t)).toBe('hi');
    await t.close();
  });
});
