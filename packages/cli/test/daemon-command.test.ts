import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { LmdbEventLog } from '@baton/runtime';
import type { SessionSetup } from '@baton/log-schema';
import {
  freePort,
  startLoopbackModel,
  startNatsServer,
  type LoopbackModel,
  type NatsServerHandle,
} from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { childEnv, completion, spawnBaton, waitForLine } from './helpers/run-baton.ts';

/*
 * Protects `baton daemon` as operators run it: a child process on a real nats-server that serves the protocol,
 * announces readiness on stdout and shuts down cleanly on SIGTERM; bad configuration is refused with one clear line
 * (checked through `main()` in-process: the same code, without a child's start-up time).
 */

async function daemon(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', 'daemon', ...args], io, env);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

let nats: NatsServerHandle;
let model: LoopbackModel;
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-daemon-cli-'));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  nats = await startNatsServer();
  model = await startLoopbackModel({ mode: 'extractive' });
}, 30_000);

afterAll(async () => {
  await model?.close();
  await nats?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('baton daemon', { timeout: 60_000 }, () => {
  it('serves protocol v1 on NATS after its readiness line and exits 0 on SIGTERM', async () => {
    const dataDir = tempDir();
    const child = spawnBaton(
      ['daemon', '--nats', nats.url, '--data-dir', dataDir, '--pool-size', '1', '--prefix', 'clitest', '--log-level', 'warn'],
      childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' }),
    );
    const done = completion(child);
    try {
      const ready = await waitForLine(child, /^baton daemon ready /);
      expect(ready).toBe(`baton daemon ready nats=${nats.url} data=${dataDir} pool=1 pid=${child.pid}`);
      expect(readFileSync(join(dataDir, 'daemon.pid'), 'utf8')).toBe(`${child.pid}\n`);
      // the event log takes one writing process at a time: a restore is refused while the daemon runs
      const restore = captureIo();
      expect(await main(['node', 'baton', 'memory', 'restore', 'some-session', '1', '--data-dir', dataDir], restore, {})).toBe(1);
      expect(restore.stderr).toEqual([expect.stringContaining(`a daemon seems to be running on ${dataDir} (pid ${child.pid}`)]);
      const transport = await NatsTransport.connect({ servers: nats.url });
      try {
        const client = new BatonClient(transport, { prefix: 'clitest' });
        const opened = await client.open({ project_id: 'cli-daemon', model: { id: 'gpt-4o', context_window: 100_000 } });
        const appended = await client.append(opened.session_id, [{ id: 'm1', role: 'user', content: 'hello' }]);
        expect(appended.accepted).toBe(1);
        expect((await client.runtimeStatus()).sessions).toBe(1);
      } finally {
        await transport.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
    const run = await done;
    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(false);
  });

  it('refuses to start a second daemon without --cluster on the prefix another daemon serves, naming it and the fixes', async () => {
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' };
    const child = spawnBaton(['daemon', '--nats', nats.url, '--data-dir', tempDir(), '--pool-size', '1', '--prefix', 'twice', '--log-level', 'warn'], childEnv(env));
    const done = completion(child);
    try {
      await waitForLine(child, /^baton daemon ready /);
      const transport = await NatsTransport.connect({ servers: nats.url });
      let first: string;
      try {
        first = (await new BatonClient(transport, { prefix: 'twice' }).runtimeStatus()).daemon_id;
      } finally {
        await transport.close();
      }
      const secondDir = tempDir();
      const second = await daemon(['--nats', nats.url, '--data-dir', secondDir, '--pool-size', '1', '--prefix', 'twice', '--log-level', 'silent'], env);
      expect(second.code).toBe(1);
      expect(second.stdout).toEqual([]);
      expect(second.stderr).toEqual([
        `baton daemon: refusing to start: daemon ${first} already serves prefix twice on this NATS; two daemons without --cluster on one prefix would split sessions between their data directories: start every daemon with --cluster to share sessions between them, or give this one its own --prefix`,
      ]);
      expect(existsSync(join(secondDir, 'daemon.pid'))).toBe(false);
      // Another prefix on the same NATS is fine.
      const other = spawnBaton(['daemon', '--nats', nats.url, '--data-dir', tempDir(), '--pool-size', '1', '--prefix', 'twice2', '--log-level', 'warn'], childEnv(env));
      const otherDone = completion(other);
      await waitForLine(other, /^baton daemon ready /);
      other.kill('SIGTERM');
      expect((await otherDone).code).toBe(0);
    } finally {
      child.kill('SIGTERM');
    }
    expect((await done).code).toBe(0);
  });

  it('stops with exit 1, naming the cause, when its worker threads cannot start (a heap limit too small to start in)', async () => {
    const dataDir = tempDir();
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' };
    const run = await daemon(['--nats', nats.url, '--data-dir', dataDir, '--pool-size', '2', '--prefix', 'noworkers', '--worker-heap-mb', '1', '--log-level', 'silent'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toEqual([expect.stringMatching(/^baton daemon: (stopping|refusing to start): the daemon's worker threads cannot start \(.*memory.*\)/) as unknown]);
    expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(false);
  });

  it('passes BATON_DISABLE_CHECKPOINT=1 to the daemon: sessions open with checkpoints disabled and start no writer', async () => {
    const dataDir = tempDir();
    const child = spawnBaton(
      ['daemon', '--nats', nats.url, '--data-dir', dataDir, '--pool-size', '1', '--prefix', 'nockpt', '--log-level', 'silent'],
      childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test', BATON_DISABLE_CHECKPOINT: '1' }),
    );
    const done = completion(child);
    let sessionId = '';
    try {
      await waitForLine(child, /^baton daemon ready /);
      const transport = await NatsTransport.connect({ servers: nats.url });
      try {
        const client = new BatonClient(transport, { prefix: 'nockpt' });
        const opened = await client.open({ project_id: 'cli-daemon', model: { id: 'gpt-4o', context_window: 100_000 }, checkpoint: { thresholds: [1000] } });
        sessionId = opened.session_id;
        const appended = await client.append(sessionId, [
          { id: 'm1', role: 'user', content: 'hello' },
          { id: 'm2', role: 'assistant', content: 'hi', finish_reason: 'stop', usage: { prompt_tokens: 5000, completion_tokens: 10 } },
        ]);
        expect(appended.state.tokens).toBe(5010);
        expect(appended.state.writer).toBe('idle');
      } finally {
        await transport.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
    expect((await done).code).toBe(0);
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    try {
      const [opened] = [...log.read(`session/${sessionId}`, { limit: 1 })];
      expect((opened?.payload as { setup: SessionSetup }).setup.input.checkpointEnabled).toBe(false);
      expect([...log.streams('writer/')]).toEqual([]);
    } finally {
      await log.close();
    }
  });

  it('gives the writers of Anthropic Messages sessions the endpoint in ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY', async () => {
    const dataDir = tempDir();
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'openai-writer-key', ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'anthropic-writer-key' };
    const child = spawnBaton(['daemon', '--nats', nats.url, '--data-dir', dataDir, '--pool-size', '1', '--prefix', 'anthcli', '--log-level', 'warn'], childEnv(env));
    const done = completion(child);
    const before = model.requests.length;
    let failure: string | undefined = 'unsettled';
    try {
      await waitForLine(child, /^baton daemon ready /);
      const transport = await NatsTransport.connect({ servers: nats.url });
      try {
        const client = new BatonClient(transport, { prefix: 'anthcli' });
        const file = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
        const tools = [
          { name: 'read_file', description: 'Read a file', input_schema: file },
          { name: 'write_file', description: 'Write a file', input_schema: { ...file, properties: { ...file.properties, content: { type: 'string' } }, required: ['path', 'content'] } },
        ];
        const opened = await client.open({
          project_id: 'cli-anthropic',
          api: 'anthropic-messages',
          model: { id: 'claude-test', context_window: 100_000 },
          system: 'You are a coding agent.',
          tools,
          checkpoint: { thresholds: [1000] },
        });
        const events = client.events(opened.session_id);
        await client.append(opened.session_id, [
          { id: 'm1', role: 'user', content: null, native: { role: 'user', content: [{ type: 'text', text: 'Fix the login bug in src/auth.ts: the session cookie is never refreshed.' }] } },
          {
            id: 'm2',
            role: 'assistant',
            content: null,
            native: { role: 'assistant', content: [{ type: 'text', text: 'The cookie is now refreshed on every request in src/auth.ts.' }] },
            finish_reason: 'end_turn',
            usage: { prompt_tokens: 5000, completion_tokens: 20 },
          },
        ]);
        for await (const e of events) {
          if (e.type === 'writer.settled') {
            failure = e.failure?.kind;
            break;
          }
        }
        events.stop();
      } finally {
        await transport.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
    expect((await done).code).toBe(0);
    // The writer settled having reached its model (without the endpoint it would fail with `auth` and call nothing;
    // what it wrote from this two-message conversation is the validator's business, not this test's).
    expect(failure).not.toBe('auth');
    expect(failure).not.toBe('unsettled');
    // It spoke Messages to the Anthropic endpoint, with the key meant for it.
    const calls = model.requests.slice(before);
    expect(calls.length).toBeGreaterThan(0);
    for (const r of calls) {
      expect(r.api).toBe('anthropic-messages');
      expect(`${String(r.headers['x-api-key'])} ${String(r.headers.authorization)}`).toContain('anthropic-writer-key');
    }
  });

  it('refuses a pool size that is not a positive integer', async () => {
    const run = await daemon(['--pool-size', 'two', '--data-dir', tempDir()], { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' });
    expect(run.code).not.toBe(0);
    expect(run.stdout).toEqual([]);
    expect(run.stderr).toEqual([expect.stringMatching(/--pool-size .*'two' is invalid/)]);
  });

  it('names OPENAI_BASE_URL when it is missing', async () => {
    const run = await daemon(['--nats', nats.url, '--data-dir', tempDir()], { OPENAI_API_KEY: 'test' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toEqual([expect.stringContaining('OPENAI_BASE_URL is not set')]);
    const noKey = await daemon(['--nats', nats.url, '--data-dir', tempDir()], { OPENAI_BASE_URL: model.baseURL });
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toEqual([expect.stringContaining('OPENAI_API_KEY is not set')]);
  });

  it('fails with one line when NATS is unreachable', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const run = await daemon(['--nats', url, '--data-dir', tempDir()], { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toEqual([`baton daemon: cannot connect to NATS at ${url}: connection refused`]);
    expect(process.listenerCount('SIGTERM')).toBe(0);
  });

  it('takes the NATS URL from BATON_NATS_URL', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const run = await daemon(['--data-dir', tempDir()], { BATON_NATS_URL: url, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toEqual([expect.stringContaining(`cannot connect to NATS at ${url}`)]);
  });
});
