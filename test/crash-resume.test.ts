import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { LmdbEventLog } from '@baton/runtime';
import { type Message } from '@baton/protocol';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';

const CHILD = fileURLToPath(new URL('./fixtures/daemon-child.ts', import.meta.url));

function startChild(nats: string, dataDir: string, model: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--conditions=@baton/source', '--import', 'tsx', CHILD, nats, dataDir, model, '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout?.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`daemon child exited with ${String(code)} before ready: ${err}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('a daemon killed with SIGKILL after acknowledged appends', () => {
  let nats: NatsServerHandle;
  let model: LoopbackModel;
  let dataDir: string;
  let transport: NatsTransport;
  let client: BatonClient;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    model = await startLoopbackModel({ mode: 'extractive' });
    dataDir = await mkdtemp(join(tmpdir(), 'baton-crash-'));
    transport = await NatsTransport.connect({ servers: nats.url });
    // A safety net, not a speed check: a reopen after a crash loads the session from the log.
    client = new BatonClient(transport, { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    for (const c of children) await killed(c);
    await transport.close();
    await model.close();
    await nats.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged message and resumes the session', async () => {
    children.push(await startChild(nats.url, dataDir, model.baseURL));
    const open = await client.open({ project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS });
    const sid = open.session_id;
    const messages = conversation(40, { step: 600 });
    const acked = new Set<string>();
    // Appends in flight while the daemon is killed: only those acknowledged before the kill count.
    let killedAt = -1;
    const sends: Promise<void>[] = [];
    for (let i = 0; i < messages.length; i += 4) {
      const batch = messages.slice(i, i + 4);
      sends.push(
        client.append(sid, batch).then(
          () => {
            for (const m of batch) acked.add(m.id);
          },
          () => {},
        ),
      );
      if (i === 40) {
        await sends[sends.length - 1];
        killedAt = i;
        await killed(children[0]!);
      }
    }
    await Promise.allSettled(sends);
    expect(killedAt).toBe(40);
    expect(acked.size).toBeGreaterThanOrEqual(44);

    children.push(await startChild(nats.url, dataDir, model.baseURL));
    const resumed = await client.open({ session_id: sid, project_id: 'shop', model: MODEL });
    expect(resumed).toMatchObject({ session_id: sid, resumed: true });

    // Every acknowledged message is in the log: re-sending them is a no-op.
    const ackedMessages: Message[] = messages.filter((m) => acked.has(m.id));
    const again = await client.append(sid, ackedMessages);
    expect(again).toMatchObject({ accepted: 0, duplicates: ackedMessages.length });
    // The session keeps working after the restart.
    const rest = messages.filter((m) => !acked.has(m.id));
    const more = await client.append(sid, rest);
    expect(more.accepted).toBe(rest.length);
    const status = await client.status(sid);
    expect(status.state.tokens).toBeGreaterThan(9_600);
    expect(status.state.next_threshold === null || status.state.next_threshold > status.state.tokens).toBe(true);

    await killed(children[1]!);
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    try {
      const stored = new Set<string>();
      for (const r of log.read(`session/${sid}`)) {
        if (r.type === 'messages.appended') for (const m of (r.payload as { messages: Message[] }).messages) stored.add(m.id);
      }
      for (const id of acked) expect(stored.has(id)).toBe(true);
      expect(stored.size).toBe(messages.length);
    } finally {
      await log.close();
    }
  });
});
