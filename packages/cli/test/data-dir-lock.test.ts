import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { LmdbEventLog } from '@baton/runtime';
import { startNatsServer, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../src/daemon/data-dir-lock.ts';
import { childEnv, completion, spawnBaton, waitForLine } from './helpers/run-baton.ts';

/*
 * One daemon per data directory: the first `baton daemon` holds the directory's lock for its life; a second daemon
 * or a `baton up` on it stops at once, non-zero, naming the holder's pid, and leaves the holder's pid file alone;
 * the kernel drops the lock with a SIGKILLed holder, so its successor starts straight away.
 */

let nats: NatsServerHandle;
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-lock-'));
  dirs.push(dir);
  return dir;
}

// No writer runs in these tests: the model endpoint is only read from the environment.
const env = childEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'test' });

function startDaemon(dataDir: string, prefix: string) {
  return spawnBaton(['daemon', '--nats', nats.url, '--data-dir', dataDir, '--pool-size', '1', '--prefix', prefix, '--log-level', 'warn'], env);
}

beforeAll(async () => {
  nats = await startNatsServer();
}, 30_000);

afterAll(async () => {
  await nats?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('lockDataDir', () => {
  it('refuses a second lock on the directory while the first is held, even in the same process, and allows it after release', () => {
    const dataDir = tempDir();
    const first = lockDataDir(dataDir, 4242);
    expect(readFileSync(first.path, 'utf8')).toBe('4242\n');
    let refused: unknown;
    try {
      lockDataDir(dataDir, 4343);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).holderPid).toBe(4242);
    expect((refused as DataDirInUseError).message).toContain('in use by pid 4242');
    // the refused attempt did not touch the holder's record
    expect(readFileSync(first.path, 'utf8')).toBe('4242\n');
    first.release();
    const second = lockDataDir(dataDir, 4343);
    expect(readFileSync(second.path, 'utf8')).toBe('4343\n');
    second.release();
  });
});

describe('one daemon per data directory', { timeout: 60_000 }, () => {
  it('refuses a second baton daemon and a baton up on a held data directory, naming the holder', async () => {
    const dataDir = tempDir();
    const holder = startDaemon(dataDir, 'lockone');
    const holderDone = completion(holder);
    try {
      await waitForLine(holder, /^baton daemon ready /);
      const second = await completion(startDaemon(dataDir, 'locktwo'));
      expect(second.code).toBe(1);
      expect(second.stdout).not.toContain('ready');
      expect(second.stderr).toContain(`baton daemon: ${dataDir} is in use by pid ${holder.pid}`);
      const up = await completion(spawnBaton(['up', '--data-dir', dataDir, '--port', '0', '--log-level', 'warn'], env));
      expect(up.code).toBe(1);
      expect(up.stderr).toContain(`baton up: ${dataDir} is in use by pid ${holder.pid}`);
      // neither refused process replaced the holder's pid file
      expect(readFileSync(join(dataDir, 'daemon.pid'), 'utf8')).toBe(`${holder.pid}\n`);
      // and the holder still serves
      const transport = await NatsTransport.connect({ servers: nats.url });
      try {
        const client = new BatonClient(transport, { prefix: 'lockone' });
        const opened = await client.open({ project_id: 'lock', model: { id: 'gpt-4o', context_window: 100_000 } });
        expect((await client.append(opened.session_id, [{ id: 'm1', role: 'user', content: 'hello' }])).accepted).toBe(1);
      } finally {
        await transport.close();
      }
    } finally {
      holder.kill('SIGTERM');
    }
    expect((await holderDone).code).toBe(0);
  });

  it('starts a new daemon at once on the data directory of a SIGKILLed one, with its acknowledged appends', async () => {
    const dataDir = tempDir();
    const first = startDaemon(dataDir, 'lockkill');
    const firstDone = completion(first);
    let sessionId = '';
    const transport = await NatsTransport.connect({ servers: nats.url });
    try {
      await waitForLine(first, /^baton daemon ready /);
      const client = new BatonClient(transport, { prefix: 'lockkill' });
      const opened = await client.open({ project_id: 'lock', model: { id: 'gpt-4o', context_window: 100_000 } });
      sessionId = opened.session_id;
      expect((await client.append(sessionId, [{ id: 'm1', role: 'user', content: 'before the kill' }])).accepted).toBe(1);
      first.kill('SIGKILL');
      expect((await firstDone).signal).toBe('SIGKILL');
      const next = startDaemon(dataDir, 'lockkill');
      const nextDone = completion(next);
      try {
        const ready = await waitForLine(next, /^baton daemon ready /);
        expect(ready).toContain(`pid=${next.pid}`);
        expect(readFileSync(join(dataDir, 'daemon.lock'), 'utf8')).toBe(`${next.pid}\n`);
        const appended = await client.append(sessionId, [{ id: 'm2', role: 'user', content: 'after the kill' }]);
        expect(appended.accepted).toBe(1);
      } finally {
        next.kill('SIGTERM');
      }
      expect((await nextDone).code).toBe(0);
    } finally {
      await transport.close();
    }
    const log = LmdbEventLog.open({ path: join(dataDir, 'events'), readOnly: true });
    try {
      const appended = [...log.read(`session/${sessionId}`)].filter((r) => r.type === 'messages.appended');
      expect(appended).toHaveLength(2);
    } finally {
      await log.close();
    }
  });
});
