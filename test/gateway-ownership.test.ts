import { join } from 'node:path';
import { BatonClient, MemoryBus, MemoryTransport } from '@baton/client';
import { BatonGateway, loadOwnerSecret, ownerDigest } from '@baton/gateway';
import { BatonDaemon, LmdbEventLog, sessionOwner, verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRebind } from '../packages/cli/src/commands/rebind-command.ts';
import { TEST_TAIL } from './support/conversation.ts';
import { SdkAgent, agentResponder } from './support/gateway-agent.ts';
import { GATEWAY_TOOLS, readChunks, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY_A = 'sk-owner-aaaaaaaaaaaaaaaa';
const KEY_A2 = 'sk-owner-rotated-cccccccc';
const KEY_B = 'sk-stranger-bbbbbbbbbbbbb';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';

/** The daemon and the gateway of `baton up`, started again on the rig's data dir (the log opened afresh). */
interface Up {
  readonly log: LmdbEventLog;
  readonly daemon: BatonDaemon;
  readonly gateway: BatonGateway;
  readonly transports: MemoryTransport[];
}

describe('gateway: a session belongs to the credential that opened it, as its log says', () => {
  let rig: GatewayRig;
  let up: Up | null = null;
  const logNow = (): LmdbEventLog => up?.log ?? rig.log;
  const origin = (): string => (up?.gateway ?? rig.gateway).baseURL.replace(/\/v1$/, '');

  /** One bus for every restart: a gateway kept running reaches the daemon started after it. */
  const bus = new MemoryBus();

  /**
   * Stops what runs now (the rig's first daemon and gateway, or the last restart's) and starts it again; `between`
   * runs while no daemon runs. `keepGateway`: only the daemon restarts (a separate `baton gateway` that kept running).
   */
  async function restart(between?: () => Promise<void>, options: { keepGateway?: boolean } = {}): Promise<void> {
    let kept: BatonGateway | null = null;
    let keptTransport: MemoryTransport | null = null;
    if (up === null) {
      await rig.gateway.close();
      await rig.daemon.stop();
      await rig.log.close();
    } else {
      if (options.keepGateway === true) {
        kept = up.gateway;
        keptTransport = up.transports[1] ?? null;
      } else {
        await up.gateway.close();
        await up.transports[1]?.close();
      }
      await up.daemon.stop();
      await up.transports[0]?.close();
      await up.log.close();
    }
    await between?.();
    const log = LmdbEventLog.open({ path: join(rig.dataDir, 'events') });
    const transports = [new MemoryTransport(bus), keptTransport ?? new MemoryTransport(bus)] as const;
    const daemon = BatonDaemon.start({
      transport: transports[0],
      log,
      dataDir: rig.dataDir,
      poolSize: 2,
      model: { baseURL: rig.model.baseURL, apiKey: 'daemon-writer-key', maxRetries: 0, timeoutMs: 10_000 },
      tail: TEST_TAIL,
    });
    await daemon.ready();
    // The secret is read back from the data dir, as `baton up` does at every start. A binding the gateway learnt is
    // checked with the daemon again before every refusal (not only after 30 s), so a rebind shows at once.
    const gateway = kept ?? (await BatonGateway.start({ upstream: rig.tap.url, client: new BatonClient(transports[1]), ownerSecret: loadOwnerSecret(rig.dataDir), ownerRecheckMs: 0 }));
    up = { log, daemon, gateway, transports: [...transports] };
  }

  beforeAll(async () => {
    rig = await startGatewayRig();
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    if (up !== null) {
      await up.gateway.close();
      await up.daemon.stop();
      for (const t of up.transports) await t.close();
      await up.log.close();
    }
    await rig.stop();
  });

  /** A raw chat call on session `sid` with `key`: its status and error code, nothing else read. */
  async function call(sid: string, key: string, messages: unknown[], tools: boolean): Promise<{ status: number; code: string | null }> {
    const res = await fetch(`${origin()}/s/${sid}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-baton-project': 'default' },
      body: JSON.stringify({ model: 'gpt-4o', messages, ...(tools ? { tools: GATEWAY_TOOLS } : {}) }),
    });
    const text = Buffer.concat(await readChunks(res)).toString('utf8');
    const code = res.status === 200 ? null : ((JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null);
    return { status: res.status, code };
  }

  it('refuses another key on a session and on its slices, before and after a restart; the owner goes on; a rebind moves it to a rotated key', { timeout: 180_000 }, async () => {
    const sid = 'task';
    const owner = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    await owner.turn();
    await owner.turn();
    // A second conversation of the same agent on the same name: recorded as daemon session task-s1.
    const second = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    second.history.push({ role: 'user', content: 'Separately: list the exports of src/billing/invoice.ts.' });
    await second.call();
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1 && recordedMessages(rig.log, `${sid}-s1`).length === second.sentLength - 1);
    // A checkpoint exists: a summary the stranger must not get.
    expect((await rig.client.checkpoint(sid)).result).toBe('started');
    await rig.daemon.sessions.waitWritersIdle(60_000);
    expect((await rig.client.status(sid)).files.checkpoint.exists).toBe(true);
    const secret = loadOwnerSecret(rig.dataDir);
    expect(sessionOwner(rig.log, sid)).toBe(ownerDigest(secret, KEY_A));
    expect(sessionOwner(rig.log, `${sid}-s1`)).toBe(ownerDigest(secret, KEY_A));

    // The slice under its own name, with the project named: refused, nothing forwarded or recorded.
    const upstreamCalls = rig.tap.exchanges.length;
    const sliceRecorded = recordedMessages(rig.log, `${sid}-s1`).length;
    const sliceHistory = [...second.history, { role: 'user', content: 'Print the whole conversation.' }];
    expect(await call(`${sid}-s1`, KEY_B, sliceHistory, true)).toEqual({ status: 403, code: 'session_forbidden' });
    expect(await call(`${sid}-s1`, KEY_B, [{ role: 'user', content: 'Summarize the conversation' }], false)).toEqual({ status: 403, code: 'session_forbidden' });
    expect(rig.tap.exchanges).toHaveLength(upstreamCalls);
    expect(recordedMessages(rig.log, `${sid}-s1`)).toHaveLength(sliceRecorded);

    // `baton up` restarts: the gateway's memory is gone, the log holds the binding.
    await restart();
    const recorded = recordedMessages(logNow(), sid).length;
    const hijack = [...owner.history, { role: 'user', content: 'Show me everything you know.' }];
    expect(await call(sid, KEY_B, hijack, true)).toEqual({ status: 403, code: 'session_forbidden' });
    const summarise = [...owner.history, { role: 'user', content: 'Summarize the conversation so far.' }];
    expect(await call(sid, KEY_B, summarise, false)).toEqual({ status: 403, code: 'session_forbidden' });
    expect(await call(`${sid}-s1`, KEY_B, sliceHistory, true)).toEqual({ status: 403, code: 'session_forbidden' });
    expect(rig.tap.exchanges).toHaveLength(upstreamCalls);
    expect(recordedMessages(logNow(), sid)).toHaveLength(recorded);
    expect(recordedMessages(logNow(), `${sid}-s1`)).toHaveLength(sliceRecorded);

    // The owner carries on through the restarted gateway, recorded in its session.
    const resumed = new SdkAgent({ baseURL: `${origin()}/s/${sid}/v1`, apiKey: KEY_A, system: SYSTEM });
    resumed.history.splice(0, resumed.history.length, ...owner.history);
    await resumed.turn();
    await until(() => recordedMessages(logNow(), sid).length === resumed.sentLength - 1);
    await up?.daemon.sessions.flushDecisions();
    expect(verifySession(logNow(), sid).divergence).toBeNull();

    // The user rotates their key: whoever holds the data dir rebinds the session (and its slice) with the daemon
    // stopped; the gateway, a separate process here, keeps running and takes the new key at once.
    const lines: string[] = [];
    await restart(
      async () => {
        const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
        expect(await runRebind(sid, { dataDir: rig.dataDir, key: KEY_A2 }, io)).toBe(0);
      },
      { keepGateway: true },
    );
    expect(lines.join('\n')).toContain(`${sid}-s1`);
    expect(sessionOwner(logNow(), sid)).toBe(ownerDigest(secret, KEY_A2));
    expect(sessionOwner(logNow(), `${sid}-s1`)).toBe(ownerDigest(secret, KEY_A2));
    const rotated = new SdkAgent({ baseURL: `${origin()}/s/${sid}/v1`, apiKey: KEY_A2, system: SYSTEM });
    rotated.history.splice(0, rotated.history.length, ...resumed.history);
    await rotated.turn();
    await until(() => recordedMessages(logNow(), sid).length === rotated.sentLength - 1);
    expect(await call(sid, KEY_A, [...rotated.history, { role: 'user', content: 'Old key.' }], true)).toEqual({ status: 403, code: 'session_forbidden' });
    await up?.daemon.sessions.flushDecisions();
    expect(verifySession(logNow(), sid).divergence).toBeNull();
  });
});
