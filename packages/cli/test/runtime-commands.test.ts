import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatonClient, NatsTransport } from '@baton/client';
import { sessionLog } from '@baton/log-schema';
import { RuntimeSessionsReplySchema, RuntimeStatusReplySchema, type OpenReply, type RuntimeSession, type StatusReply } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { freePort, startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { shortConversation } from './helpers/record-session.ts';
import { runBaton } from './helpers/run-baton.ts';

/*
 * `baton status` and `baton sessions` against a running daemon: a real nats-server, a real BatonDaemon with an LMDB
 * log in a temp dir and the extractive loopback model. One session writes a checkpoint and is closed (it leaves
 * memory: listed from its decisions), one has appended usage, one is only opened, one was opened by an earlier
 * process and never got an input (setup only). The figures the commands print are checked against what happened.
 */

const PREFIX = 'ops';
const MODEL = { id: 'gpt-4o', context_window: 100_000 };

let nats: NatsServerHandle;
let model: LoopbackModel;
let dataDir: string;
let log: LmdbEventLog;
let daemonTransport: NatsTransport;
let daemon: BatonDaemon;
let clientTransport: NatsTransport;
let client: BatonClient;

/** What the scenario did, to compare the commands' output with. */
let closedBefore: StatusReply;
let withUsage: OpenReply;
let onlyOpened: OpenReply;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function baton(args: string[]): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', ...args], io, {});
  return { code, stdout: io.stdout, stderr: io.stderr };
}

beforeAll(async () => {
  nats = await startNatsServer();
  model = await startLoopbackModel({ mode: 'extractive' });
  dataDir = mkdtempSync(join(tmpdir(), 'baton-runtime-cli-'));
  log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  daemonTransport = await NatsTransport.connect({ servers: nats.url });
  daemon = BatonDaemon.start({
    transport: daemonTransport,
    log,
    dataDir,
    poolSize: 1,
    prefix: PREFIX,
    model: { baseURL: model.baseURL, apiKey: 'test', maxRetries: 0, timeoutMs: 10_000 },
    tail: { minTokens: 50, maxTokens: 400, minTextMessages: 1 },
  });
  await daemon.ready();
  await daemonTransport.flush();
  clientTransport = await NatsTransport.connect({ servers: nats.url });
  client = new BatonClient(clientTransport, { prefix: PREFIX });

  // sess-a: crosses its thresholds, a writer settles, then it is closed and leaves memory.
  await client.open({ session_id: 'sess-a', project_id: 'shop', model: MODEL, system: 'You are a careful coding agent.', checkpoint: { thresholds: [1000, 2000] } });
  const settled = client.waitForEvent('sess-a', (e) => e.type === 'writer.settled', 30_000);
  for (const turn of shortConversation()) await client.append('sess-a', turn);
  await settled;
  await until('sess-a idle', async () => (await client.status('sess-a')).state.writer === 'idle', 30_000);
  closedBefore = await client.status('sess-a');
  await client.close('sess-a');

  // sess-b: usage appended, no writer (checkpoints off); sess-c: only opened. Both stay resident.
  withUsage = await client.open({ session_id: 'sess-b', project_id: 'shop', model: MODEL, checkpoint: { enabled: false } });
  await client.append('sess-b', [
    { id: 'b1', role: 'user', content: 'hello' },
    { id: 'b2', role: 'assistant', content: 'hi', finish_reason: 'stop', usage: { prompt_tokens: 5_000, completion_tokens: 10 } },
  ]);
  onlyOpened = await client.open({ session_id: 'sess-c', project_id: 'docs', model: MODEL });

  // sess-0: opened by an earlier process that stopped before its first input (its stream is session.opened only).
  const sessions = sessionLog(log);
  const [opened] = [...sessions.read('sess-c', { from: 1, to: 1 })];
  if (opened?.type !== 'session.opened') throw new Error('sess-c has no session.opened');
  await sessions.append('sess-0', [{ type: 'session.opened', at: opened.at - 60_000, payload: opened.payload, msgId: 'session.opened' }]);

  // A closed session leaves memory once its close is answered.
  await until('sess-a to leave memory', async () => (await client.runtimeStatus()).sessions === 2);
}, 90_000);

afterAll(async () => {
  await daemon?.stop();
  await clientTransport?.close();
  await daemonTransport?.close();
  await log?.close();
  await model?.close();
  await nats?.stop();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

describe('baton status', { timeout: 60_000 }, () => {
  it('--json prints the runtime.status reply: resident and total sessions, writers, pool, RSS and log size', async () => {
    const run = await runBaton(['status', '--json', '--nats', nats.url, '--prefix', PREFIX]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const reply = RuntimeStatusReplySchema.parse(JSON.parse(run.stdout));
    expect(reply).toMatchObject({
      ok: true,
      daemon_id: daemon.id,
      sessions: 2,
      sessions_total: 4,
      quarantined: 0,
      writers: { running: 0, queued: 0 },
      pool: { threads: 1 },
    });
    expect(reply.log.streams).toBeGreaterThanOrEqual(4 + 1); // four sessions, at least one writer, the commit journal
    expect(reply.rss_bytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(reply.log_bytes).toBeGreaterThan(0);
  });

  it('prints one readable block', async () => {
    const run = await baton(['status', '--nats', nats.url, '--prefix', PREFIX]);
    expect(run.code).toBe(0);
    expect(run.stdout[0]).toMatch(new RegExp(`^daemon +${daemon.id} · up \\d+s · ${nats.url}$`));
    expect(run.stdout).toContain('sessions  2 resident · 4 in the log · 0 quarantined');
    expect(run.stdout).toContain('writers   0 running · 0 queued');
    expect(run.stdout.find((l) => l.startsWith('memory '))).toMatch(/^memory {4}\d{1,3}( \d{3})+ bytes \(\d+\.\d MiB\) resident \(RSS\)$/);
    expect(run.stdout.find((l) => l.startsWith('log '))).toMatch(/^log {7}\d+ streams · \d{1,3}( \d{3})* bytes/);
  });

  it('names the URL on stderr and exits 2 when no daemon answers on the prefix', async () => {
    const run = await baton(['status', '--nats', nats.url, '--prefix', 'nobody']);
    expect(run.code).toBe(2);
    expect(run.stdout).toEqual([]);
    expect(run.stderr).toEqual([`baton status: no daemon answered on prefix nobody at ${nats.url} (nothing subscribes to it)`]);
  });

  it('names the URL on stderr and exits 2 when no NATS server listens there', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const run = await baton(['status', '--nats', url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toEqual([expect.stringMatching(new RegExp(`^baton status: cannot connect to NATS at ${url}: `))]);
  });

  it('takes the NATS URL from BATON_NATS_URL', async () => {
    const io = captureIo();
    expect(await main(['node', 'baton', 'status', '--json', '--prefix', PREFIX], io, { BATON_NATS_URL: nats.url })).toBe(0);
    expect(RuntimeStatusReplySchema.parse(JSON.parse(io.stdout.join('\n'))).daemon_id).toBe(daemon.id);
  });
});

describe('baton sessions', { timeout: 60_000 }, () => {
  const byId = (sessions: readonly RuntimeSession[], id: string): RuntimeSession => {
    const s = sessions.find((x) => x.session_id === id);
    if (s === undefined) throw new Error(`${id} not listed`);
    return s;
  };

  it('--json lists every session: live state when resident, the newest decision when not, setup only without one', async () => {
    const run = await runBaton(['sessions', '--json', '--nats', nats.url, '--prefix', PREFIX]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const reply = RuntimeSessionsReplySchema.parse(JSON.parse(run.stdout));
    expect(reply.daemon_id).toBe(daemon.id);
    expect(reply.next).toBeUndefined();
    expect(reply.sessions.map((s) => s.session_id)).toEqual(['sess-0', 'sess-a', 'sess-b', 'sess-c']);

    // Closed: out of memory, its last state read back from its decisions.
    const a = byId(reply.sessions, 'sess-a');
    const lastTurn = shortConversation().at(-1)?.at(-1);
    expect(a).toMatchObject({ project_id: 'shop', model: 'gpt-4o', resident: false, quarantined: false, closed: true });
    expect(a.state).toEqual({ ...closedBefore.state, tokens: lastTurn?.usage?.total_tokens });
    expect(closedBefore.last_outcome).not.toBeNull();
    expect(a.last_outcome).toEqual({ writer_id: closedBefore.last_outcome?.writer_id, outcome: closedBefore.last_outcome?.outcome });
    expect(a.error).toBeUndefined();

    // Resident with appended usage: the live summary (checkpoints off: the rungs stay armed, none fires).
    expect(byId(reply.sessions, 'sess-b')).toEqual({
      session_id: 'sess-b',
      project_id: 'shop',
      model: 'gpt-4o',
      opened_at: expect.any(Number) as unknown,
      resident: true,
      quarantined: false,
      state: {
        tokens: 5_010,
        usable_window: withUsage.usable_window,
        next_threshold: withUsage.thresholds[0],
        watermark: null,
        writer: 'idle',
        overflow: false,
        // What the session learnt from the one reply that reported usage (5 000 prompt tokens for a few words, far more
        // than Baton counts), and that report.
        calibration: expect.objectContaining({ text: expect.any(Number) as unknown, tool: expect.any(Number) as unknown, image: expect.any(Number) as unknown }) as unknown,
        last_prompt_tokens: 5_000,
      },
      closed: false,
      last_outcome: null,
    });
    // Resident, only opened.
    expect(byId(reply.sessions, 'sess-c')).toMatchObject({
      project_id: 'docs',
      resident: true,
      state: { tokens: 0, usable_window: onlyOpened.usable_window, next_threshold: onlyOpened.thresholds[0], watermark: null, writer: 'idle', overflow: false },
      closed: false,
      last_outcome: null,
    });
    // Never got an input and not in memory: its setup only.
    expect(byId(reply.sessions, 'sess-0')).toEqual({
      session_id: 'sess-0',
      project_id: 'docs',
      model: 'gpt-4o',
      opened_at: byId(reply.sessions, 'sess-c').opened_at! - 60_000,
      resident: false,
      quarantined: false,
      state: null,
      closed: false,
      last_outcome: null,
    });
  });

  it('--limit gives one page and its next; --after continues from it until no next is left', async () => {
    const pages: { ids: string[]; next: string | undefined }[] = [];
    let after: string[] = [];
    for (;;) {
      const run = await baton(['sessions', '--json', '--limit', '1', ...after, '--nats', nats.url, '--prefix', PREFIX]);
      expect(run.code).toBe(0);
      const page = RuntimeSessionsReplySchema.parse(JSON.parse(run.stdout.join('\n')));
      pages.push({ ids: page.sessions.map((s) => s.session_id), next: page.next });
      if (page.next === undefined) break;
      after = ['--after', page.next];
    }
    expect(pages).toEqual([
      { ids: ['sess-0'], next: 'sess-0' },
      { ids: ['sess-a'], next: 'sess-a' },
      { ids: ['sess-b'], next: 'sess-b' },
      { ids: ['sess-c'], next: undefined },
    ]);
    const wide = await client.runtimeSessions({ limit: 3, after: 'sess-0' });
    expect(wide.sessions.map((s) => s.session_id)).toEqual(['sess-a', 'sess-b', 'sess-c']);
    expect(wide.next).toBeUndefined();
  });

  it('prints an aligned table with grouped numbers', async () => {
    const run = await baton(['sessions', '--nats', nats.url, '--prefix', PREFIX]);
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout;
    expect(header).toMatch(/^SESSION +PROJECT +RESIDENT +TOKENS +WINDOW +WATERMARK +WRITER +OVERFLOW +LAST SENT +TOO LONG +CLOSED +LAST WRITER$/);
    const row = (id: string): string => rows.find((r) => r.startsWith(`${id} `)) ?? '';
    expect(row('sess-b')).toMatch(/^sess-b +shop +yes +5 010 +\d{1,3} \d{3} +– +idle +no +5 000 +0 +no +–$/);
    expect(row('sess-a')).toMatch(new RegExp(`^sess-a +shop +no +2 450 .* +yes +${closedBefore.last_outcome?.outcome} …-w\\d+$`));
    expect(row('sess-0')).toMatch(/^sess-0 +docs +no +– +– +– +– +– +– +– +no +–$/);
    // Columns line up: every TOKENS cell ends where the header's does.
    const end = (header ?? '').indexOf('TOKENS') + 'TOKENS'.length;
    for (const id of ['sess-0', 'sess-a', 'sess-b', 'sess-c']) expect(row(id)[end - 1]).toMatch(/[0-9–]/);
    expect(run.stdout.at(-1)).toBe('4 sessions');
    const paged = await baton(['sessions', '--limit', '2', '--nats', nats.url, '--prefix', PREFIX]);
    expect(paged.stdout.at(-1)).toBe('2 sessions listed; more follow: baton sessions --after sess-a');
  });

  it('exits 2 with one line naming the URL when no daemon answers, and refuses a bad limit', async () => {
    const none = await baton(['sessions', '--nats', nats.url, '--prefix', 'nobody']);
    expect(none.code).toBe(2);
    expect(none.stderr).toEqual([`baton sessions: no daemon answered on prefix nobody at ${nats.url} (nothing subscribes to it)`]);
    const bad = await baton(['sessions', '--limit', '0', '--nats', nats.url]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toEqual([expect.stringMatching(/--limit .*'0' is invalid/)]);
  });
});
