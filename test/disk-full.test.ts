import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, BatonRequestError, NatsTransport } from '@baton/client';
import type { Message } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog, verifySession } from '@baton/runtime';
import { startNatsServer, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL } from './support/conversation.ts';

/** Size of the filesystem the data directory lives on, and of the file that takes part of it until it is freed. */
const FS_MB = 24;
const FILLER_MB = 6;

/*
 * A data directory on a real filesystem that fills up: a size-limited tmpfs, mounted by the test (it runs as root,
 * as CI does on this project's machines). The event log starts with a map far smaller than what it will hold (lmdb-js
 * grows it), and the daemon's session appends ~64 KB messages until the filesystem is full.
 */
describe('a full disk', { timeout: 120_000 }, () => {
  let mountPoint: string;
  let nats: NatsServerHandle;
  let log: LmdbEventLog;
  let daemon: BatonDaemon;
  let daemonTransport: NatsTransport;
  let clientTransport: NatsTransport;
  let client: BatonClient;

  beforeAll(async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'baton-disk-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FS_MB}m`, 'tmpfs', mountPoint]);
    nats = await startNatsServer();
    writeFileSync(join(mountPoint, 'filler'), Buffer.alloc(FILLER_MB * 1024 * 1024, 1));
    log = LmdbEventLog.open({ path: join(mountPoint, 'events'), mapSize: 256 * 1024 });
    daemonTransport = await NatsTransport.connect({ servers: nats.url });
    daemon = BatonDaemon.start({
      transport: daemonTransport,
      log,
      dataDir: mountPoint,
      poolSize: 1,
      checkpointDisabled: true,
      model: { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'test', maxRetries: 0 },
    });
    await daemon.ready();
    clientTransport = await NatsTransport.connect({ servers: nats.url });
    client = new BatonClient(clientTransport);
  });

  afterAll(async () => {
    await daemon?.stop();
    await clientTransport?.close();
    await daemonTransport?.close();
    await log?.close();
    await nats?.stop();
    if (mountPoint !== undefined) {
      execFileSync('umount', [mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });

  it('answers the append that cannot be made durable unavailable (storage), keeps nothing of it, and serves again once space is freed', async () => {
    const sid = (await client.open({ project_id: 'disk', model: { ...MODEL, context_window: 100_000_000 } })).session_id;
    const acknowledged: string[] = [];
    let refused: { message: Message; error: BatonRequestError } | null = null;
    for (let i = 0; refused === null; i++) {
      // distinct text: no two messages compress into each other
      const message: Message = { id: `big-${i}`, role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} `.repeat(20_000) };
      try {
        expect((await client.append(sid, [message])).accepted).toBe(1);
        acknowledged.push(message.id);
      } catch (err) {
        if (!(err instanceof BatonRequestError)) throw err;
        refused = { message, error: err };
      }
      if (i > 2_000) throw new Error('the filesystem never filled');
    }
    // the map grew far past the size it was opened with before the disk ran out
    expect(statSync(join(mountPoint, 'events', 'data.mdb')).size).toBeGreaterThan(4 * 1024 * 1024);
    expect(refused.error.code).toBe('unavailable');
    expect(refused.error.details).toEqual({ reason: 'storage' });
    expect(refused.error.message).toMatch(/event log could not write durably/);

    // Nothing of the refused append was written; every acknowledged one is there.
    const loggedIds = (): string[] => [...log.read(`session/${sid}`)].flatMap((r) => (r.type === 'messages.appended' ? (r.payload as { messages: Message[] }).messages.map((m) => m.id) : []));
    expect(loggedIds()).toEqual(acknowledged);
    // The session is neither quarantined nor broken: it answers, with the state of its acknowledged appends.
    expect(daemon.runtimeStatus().quarantined).toBe(0);
    expect((await client.status(sid)).state.writer).toBe('idle');

    // Still full: the same append is refused the same way again (the daemon lives on).
    await expect(client.append(sid, [refused.message])).rejects.toMatchObject({ code: 'unavailable', details: { reason: 'storage' } });
    expect(loggedIds()).toEqual(acknowledged);

    // Space comes back: the same append is accepted, without a restart, and more after it.
    rmSync(join(mountPoint, 'filler'));
    expect((await client.append(sid, [refused.message])).accepted).toBe(1);
    acknowledged.push(refused.message.id);
    expect((await client.append(sid, [{ id: 'after', role: 'user', content: 'space is back' }])).accepted).toBe(1);
    acknowledged.push('after');
    expect(loggedIds()).toEqual(acknowledged);
    expect(daemon.runtimeStatus().quarantined).toBe(0);
    await daemon.sessions.flushDecisions();
    expect(verifySession(log, sid).divergence).toBeNull();
  });
});
