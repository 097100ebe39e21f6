import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterStatusText } from '../src/commands/cluster-command.ts';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { childEnv, completion, spawnBaton, waitForLine } from './helpers/run-baton.ts';

/*
 * `baton daemon --cluster` as operators run it (child processes on a real nats-server with a user and password), and
 * `baton cluster status` reading the cluster from JetStream. Refusals are checked through `main()` in-process.
 */

let nats: NatsServerHandle;
let model: LoopbackModel;
const dirs: string[] = [];
const USER = ['--nats-user', 'baton'];
const PASSWORD = { BATON_NATS_PASSWORD: 'pw-1' };

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', ...args], io, env);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

beforeAll(async () => {
  nats = await startNatsServer({ args: ['--user', 'baton', '--pass', 'pw-1'] });
  model = await startLoopbackModel({ mode: 'extractive' });
}, 30_000);

afterAll(async () => {
  await model?.close();
  await nats?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('baton daemon --cluster and baton cluster status', { timeout: 60_000 }, () => {
  it('refuses cluster tuning without --cluster, a password-less user, and a client certificate without its key', async () => {
    const env = { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' };
    expect(await run(['daemon', '--nats', nats.url, '--durability', 'replicated', '--lease-ms', '2000'], env)).toMatchObject({ code: 1, stderr: ['baton daemon: --durability, --lease-ms needs --cluster'] });
    expect(await run(['daemon', '--nats', nats.url, '--cluster', ...USER], env)).toMatchObject({ code: 1, stderr: ['baton daemon: --nats-user needs its password in $BATON_NATS_PASSWORD'] });
    expect(await run(['cluster', 'status', '--nats', nats.url, '--nats-tls-cert', '/x.pem'])).toMatchObject({ code: 1, stderr: ['baton cluster status: --nats-tls-cert and --nats-tls-key go together'] });
    const denied = await run(['cluster', 'status', '--nats', nats.url]);
    expect(denied.code).toBe(2);
    expect(denied.stderr[0]).toMatch(/cannot connect to NATS .*authorization/i);
    expect(await run(['cluster', 'status', '--nats', nats.url, ...USER, '--prefix', 'nocluster'], PASSWORD)).toMatchObject({
      code: 2,
      stderr: [`baton cluster status: no cluster on prefix nocluster: KV bucket nocluster_cluster not found at ${nats.url}`],
    });
  });

  it('prints in-step replicas with lag 0 and a log between leaders as "leader election in progress"', () => {
    const replica = (server: string, leader: boolean): { server: string; leader: boolean; current: boolean; offline: boolean; lag: number } => ({ server, leader, current: true, offline: false, lag: 0 });
    const lines = clusterStatusText({
      daemons: [{ daemonId: 'baton-a', heartbeatAt: 1_000, ageMs: 400, sessions: 2, revision: 9 }],
      sessions: [{ sessionId: 's1', epoch: 1, daemonId: 'baton-a' }],
      log: { name: 'BATON_LOG', messages: null, bytes: null, replicas: [replica('n2', false)], electing: true },
      bucket: { name: 'KV_baton_cluster', messages: 5, bytes: 900, replicas: [replica('n1', true), replica('n2', false), replica('n3', false)], electing: false },
    });
    expect(lines).toEqual([
      'daemons (1):',
      '  baton-a  heartbeat 0.4 s ago  says it holds 2  owns 1',
      'sessions (1): 0 owned by a daemon with no heartbeat (taken over at their next open)',
      'log BATON_LOG: leader election in progress; replicas: n2 current, lag 0',
      'bucket KV_baton_cluster: 5 messages, 900 bytes; replicas: n1 (leader), n2 current, lag 0, n3 current, lag 0',
    ]);
  });

  it('runs two replicated daemons that share sessions; cluster status lists them, their heartbeats and who owns what', async () => {
    const env = childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test', ...PASSWORD });
    const children = [0, 1].map(() => {
      const dataDir = mkdtempSync(join(tmpdir(), 'baton-cluster-cli-'));
      dirs.push(dataDir);
      const args = ['daemon', '--nats', nats.url, ...USER, '--data-dir', dataDir, '--pool-size', '1', '--log-level', 'warn', '--cluster', '--durability', 'replicated', '--lease-ms', '3000'];
      return spawnBaton(args, env);
    });
    const done = children.map((c) => completion(c));
    try {
      const ready = await Promise.all(children.map((c) => waitForLine(c, /^baton daemon ready /)));
      const ids = ready.map((line) => /cluster=replicated id=(\S+)$/.exec(line)?.[1]);
      expect(ids.every((id) => id !== undefined)).toBe(true);
      const transport = await NatsTransport.connect({ servers: nats.url, auth: { user: 'baton', pass: 'pw-1' } });
      try {
        const client = new BatonClient(transport);
        for (let i = 0; i < 6; i++) {
          const opened = await client.open({ project_id: 'cli-cluster', model: { id: 'gpt-4o', context_window: 100_000 } });
          expect((await client.append(opened.session_id, [{ id: 'm1', role: 'user', content: 'hello' }])).accepted).toBe(1);
        }
        const status = await client.runtimeStatus();
        expect(status.cluster).toMatchObject({ durability: 'replicated', lease_ms: 3000, paused: false });
      } finally {
        await transport.close();
      }
      // `baton status` with the same credentials: one daemon's overview, its cluster view on one line.
      const overview = await run(['status', '--nats', nats.url, ...USER], PASSWORD);
      expect(overview.code).toBe(0);
      expect(overview.stdout.find((l) => l.startsWith('cluster '))).toMatch(/^cluster {3}replicated · lease 3s · holds \d+ · heartbeat \d+\.\d s ago · 2 daemons$/);
      const text = await run(['cluster', 'status', '--nats', nats.url, ...USER], PASSWORD);
      expect(text.code).toBe(0);
      expect(text.stdout[0]).toBe('daemons (2):');
      for (const id of ids) expect(text.stdout.some((l) => l.startsWith(`  ${String(id)}  heartbeat `))).toBe(true);
      expect(text.stdout).toContain('sessions (6): 0 owned by a daemon with no heartbeat (taken over at their next open)');
      const json = await run(['cluster', 'status', '--nats', nats.url, ...USER, '--json'], PASSWORD);
      const parsed = JSON.parse(json.stdout[0] ?? '{}') as { daemons: { daemonId: string }[]; sessions: { daemonId: string }[]; log: { messages: number } };
      expect(parsed.daemons.map((d) => d.daemonId).sort()).toEqual([...ids].sort());
      expect(parsed.sessions).toHaveLength(6);
      expect(parsed.log.messages).toBeGreaterThanOrEqual(12);
    } finally {
      for (const c of children) c.kill('SIGTERM');
    }
    for (const r of await Promise.all(done)) expect(r.code).toBe(0);
  });
});
