import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { LmdbEventLog, verifySession } from '@baton/runtime';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';

const CHILD = fileURLToPath(new URL('./fixtures/daemon-child.ts', import.meta.url));
const ROUNDS = 20;
const SESSIONS = 4;

function startChild(nats: string, dataDir: string, model: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--conditions=@baton/source', '--import', 'tsx', CHILD, nats, dataDir, model, '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout?.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`daemon child exited with ${String(code)} before ready: ${err}`)));
  });
}

function stopped(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * Twenty SIGKILLs of a daemon in the middle of bursts — appends to four sessions and checkpoint requests, so writers
 * are running, settling or committing when it dies — each followed by a restart that loads the sessions again. At the
 * end every session and its writers re-fold without a divergence (`baton replay --verify`).
 */
describe('replay agrees with the log after any number of SIGKILLs', () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  let dataDir: string;
  let transport: NatsTransport;
  let client: BatonClient;
  let child: ChildProcess | null = null;

  beforeAll(async () => {
    nats = await startNatsServer();
    model = await startLoopbackModel({ mode: 'extractive' });
    dataDir = await mkdtemp(join(tmpdir(), 'baton-sigkill-'));
    transport = await NatsTransport.connect({ servers: nats.url });
    // A safety net, not a speed check: after a SIGKILL a reopen loads the session and settles what its writer left,
    // which on a machine loaded by other work can take far longer than on an idle one.
    client = new BatonClient(transport, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    if (child !== null) await stopped(child, 'SIGKILL');
    await transport.close();
    await model.close();
    await nats.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(`verifies every session after ${ROUNDS} kills during bursts with writers running`, { timeout: 600_000 }, async () => {
    const sids = Array.from({ length: SESSIONS }, (_, i) => `kill-${i}`);
    let killedWithWriters = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      child = await startChild(nats.url, dataDir, model.baseURL);
      // Opening (or resuming) loads each session: what the previous process left of a writer is settled here.
      for (const sid of sids) await client.open({ session_id: sid, project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
      if (round === ROUNDS) break;
      // A burst: every session gets two turns and asks for a checkpoint, all at once.
      const started = sids.map((sid) => client.waitForEvent(sid, (e) => e.type === 'writer.started', 10_000).then(() => true, () => false));
      const burst = sids.map(async (sid, i) => {
        await client.append(sid, conversation(2, { prefix: `r${round}s${i}-`, start: 2_000 + round * 600, step: 300 }));
        await client.checkpoint(sid).catch(() => undefined);
      });
      await Promise.allSettled(burst);
      // Killed as soon as one writer of the burst is under way: the others are anywhere in their run.
      if ((await Promise.race(started)) === true) killedWithWriters++;
      await stopped(child, 'SIGKILL');
      child = null;
    }
    expect(killedWithWriters).toBeGreaterThanOrEqual(ROUNDS / 2);
    // A clean stop of the last daemon (it loaded every session, settling what the last kill left), then the log alone.
    if (child !== null) await stopped(child, 'SIGTERM');
    child = null;
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    try {
      for (const sid of sids) {
        const result = verifySession(log, sid);
        expect(result.divergence, `${sid}: ${JSON.stringify(result.divergence)}`).toBeNull();
        expect(result.writers).toBeGreaterThan(0);
      }
    } finally {
      await log.close();
    }
  });
});
