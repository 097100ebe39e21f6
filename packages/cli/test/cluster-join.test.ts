import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { startLoopbackModel, startNatsCluster, startNatsServer, type LoopbackModel, type NatsClusterHandle, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { childEnv, completion, spawnBaton, waitForLine } from './helpers/run-baton.ts';

/*
 * `baton daemon --cluster` started in any order against its NATS servers, as an operator would: a daemon that cannot
 * join keeps trying, says why in its log and in `baton status` (which exits 3 while it does not serve), stops at once
 * on SIGTERM, and serves once the cluster is there. Real nats-server processes; daemons are child processes.
 */

let model: LoopbackModel;
const dirs: string[] = [];
/** Every daemon started, stopped by pid at the end should a test fail before it stopped them itself. */
const daemons: ChildProcess[] = [];
/** The NATS servers started (their stop is idempotent), stopped at the end in any case. */
const natsStops: (() => Promise<void>)[] = [];

function spawnDaemon(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawnBaton(args, env);
  daemons.push(child);
  return child;
}

function daemonArgs(nats: string, extra: string[]): string[] {
  const dataDir = mkdtempSync(join(tmpdir(), 'baton-cluster-join-'));
  dirs.push(dataDir);
  return ['daemon', '--nats', nats, '--data-dir', dataDir, '--pool-size', '1', '--log-level', 'warn', '--cluster', ...extra];
}

/** The daemon's log line (pino JSON on stderr) for a failed attempt to join, with its cause. */
function joinWarning(reason: string): RegExp {
  return new RegExp(`^(?=.*"msg":"cannot join the cluster yet")(?=.*"reason":"${reason}")`);
}

async function status(nats: string): Promise<{ code: number; stdout: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', 'status', '--nats', nats], io, {});
  return { code, stdout: io.stdout };
}

beforeAll(async () => {
  model = await startLoopbackModel({ mode: 'extractive' });
}, 30_000);

afterAll(async () => {
  for (const d of daemons) if (d.exitCode === null && d.signalCode === null && d.pid !== undefined) process.kill(d.pid, 'SIGKILL');
  for (const stop of natsStops) await stop();
  await model?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a cluster daemon joins in any order', { timeout: 120_000 }, () => {
  it('names JetStream disabled and replicas above a single server as the cause, baton status exits 3, SIGTERM stops it', async () => {
    const servers: NatsServerHandle[] = [];
    try {
      servers.push(await startNatsServer({ jetstream: false }), await startNatsServer());
      for (const s of servers) natsStops.push(() => s.stop());
      const [plain, single] = servers as [NatsServerHandle, NatsServerHandle];
      const env = childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' });
      const noJs = spawnDaemon(daemonArgs(plain.url, []), env);
      const tooMany = spawnDaemon(daemonArgs(single.url, ['--durability', 'replicated', '--replicas', '3']), env);
      const done = [completion(noJs), completion(tooMany)];
      try {
        await waitForLine(noJs, joinWarning('jetstream_disabled'), 'stderr');
        await waitForLine(tooMany, joinWarning('replicas_above_cluster'), 'stderr');
        const a = await status(plain.url);
        expect(a.code).toBe(3);
        expect(a.stdout.find((l) => l.startsWith('serving '))).toMatch(/^serving {3}NO — jetstream_disabled: JetStream is not enabled on the NATS server.*: start nats-server with -js/);
        const b = await status(single.url);
        expect(b.code).toBe(3);
        expect(b.stdout.find((l) => l.startsWith('serving '))).toMatch(
          /^serving {3}NO — replicas_above_cluster: --replicas 3 is more than this NATS deployment has: JetStream runs on one server, not clustered \(JetStream error 10074: replicas > 1 not supported in non-clustered mode\)/,
        );
        // Sessions are refused meanwhile, with the same reason a client can act on.
        const transport = await NatsTransport.connect({ servers: single.url });
        try {
          await expect(new BatonClient(transport, { timeoutMs: 30_000 }).open({ project_id: 'p', model: { id: 'gpt-4o', context_window: 100_000 } })).rejects.toMatchObject({ code: 'unavailable' });
        } finally {
          await transport.close();
        }
      } finally {
        noJs.kill('SIGTERM');
        tooMany.kill('SIGTERM');
      }
      // SIGTERM while the daemons wait to join: both stop cleanly (the test waits for their exit, nothing else).
      for (const r of await Promise.all(done)) expect(r).toMatchObject({ code: 0, signal: null });
    } finally {
      for (const s of servers) await s.stop();
    }
  });

  it('a daemon started with 1 of 3 nodes up waits for the quorum, then joins and serves; SIGTERM during the wait stops one at once', async () => {
    let cluster: NatsClusterHandle | null = null;
    try {
      cluster = await startNatsCluster({ running: 1 });
      const started = cluster;
      natsStops.push(() => started.stop());
      const nodes = cluster.nodes;
      const urls = cluster.urls.join(',');
      const env = childEnv({ OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'test' });
      const args = ['--durability', 'replicated', '--replicas', '3', '--lease-ms', '3000'];
      const joiner = spawnDaemon(daemonArgs(urls, args), env);
      const quitter = spawnDaemon(daemonArgs(urls, args), env);
      const joinerDone = completion(joiner);
      const quitterDone = completion(quitter);
      try {
        await waitForLine(joiner, joinWarning('no_quorum'), 'stderr');
        await waitForLine(quitter, joinWarning('no_quorum'), 'stderr');
        const waiting = await status(nodes[0]?.url ?? '');
        expect(waiting.code).toBe(3);
        expect(waiting.stdout.find((l) => l.startsWith('serving '))).toMatch(/^serving {3}NO — no_quorum: JetStream (did not answer: no quorum yet|has no leader yet) in cluster baton-test/);
        // Its start-up is a wait for the cluster (a JetStream request in flight, or the delay before the next one).
        const termAt = performance.now();
        quitter.kill('SIGTERM');
        expect(await quitterDone).toMatchObject({ code: 0, signal: null });
        // "At once": the join wait gives way to SIGTERM, not to its next attempt (the bound the operator is promised).
        expect(performance.now() - termAt).toBeLessThan(2_000);
        await Promise.all([nodes[1]?.restart(), nodes[2]?.restart()]);
        await waitForLine(joiner, /^baton daemon ready .*cluster=replicated/);
        const transport = await NatsTransport.connect({ servers: [...cluster.urls] });
        try {
          const client = new BatonClient(transport, { timeoutMs: 30_000 });
          const opened = await client.open({ project_id: 'join-order', model: { id: 'gpt-4o', context_window: 100_000 } });
          expect((await client.append(opened.session_id, [{ id: 'm1', role: 'user', content: 'hello' }])).accepted).toBe(1);
          expect(await client.runtimeStatus()).toMatchObject({ serving: true, cluster: { durability: 'replicated' } });
        } finally {
          await transport.close();
        }
        expect((await status(nodes[0]?.url ?? '')).code).toBe(0);
      } finally {
        joiner.kill('SIGTERM');
        quitter.kill('SIGTERM');
      }
      expect(await joinerDone).toMatchObject({ code: 0, signal: null });
    } finally {
      await cluster?.stop();
    }
  });
});
