import { randomBytes } from 'node:crypto';
import { BatonRequestError } from '@baton/client';
import { countTokensOnce } from '@baton/memory-store';
import { viewOf, type OpenRequest } from '@baton/protocol';
import { sessionOwner, systemClock, type Clock } from '@baton/runtime';
import { extractiveStep, type RecordedRequest } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, WRITER_TOOLS, conversation } from './support/conversation.ts';
import { startRestartRig, type RestartRig } from './support/restart-rig.ts';
import { main } from '../packages/cli/src/main.ts';
import { captureIo } from '../packages/cli/test/helpers/capture-io.ts';

async function baton(args: string[]): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', ...args], io, {});
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const OWNER_OLD = `hmac-sha256:${'o'.repeat(43)}`;
const OWNER_NEW = `hmac-sha256:${'n'.repeat(43)}`;
const OWNER_OTHER = `hmac-sha256:${'x'.repeat(43)}`;
const TTL_MS = 60_000;

/** The system clock, moved on by the test when it says so (the daemon reads the time only through its clock). */
let offset = 0;
const clock: Clock = { now: () => Date.now() + offset, setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms), clearTimeout: (handle) => systemClock.clearTimeout(handle) };

/** Why the daemon refused: `code` and `details.reason`. */
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'accepted';
  } catch (err) {
    if (!(err instanceof BatonRequestError)) throw err;
    return `${err.code}:${String((err.details as { reason?: unknown } | undefined)?.reason)}`;
  }
}

describe('daemon: handoff tokens', () => {
  let rig: RestartRig;
  /** The writer's model calls wait for this while it is set. */
  let gate: Promise<void> | null = null;
  const openReq = (extra: Partial<OpenRequest>): OpenRequest => ({ project_id: 'handoff', agent: 'test', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, ...extra });

  beforeAll(async () => {
    rig = await startRestartRig();
    rig.model.setResponder(async (req: RecordedRequest) => {
      if (gate !== null) await gate;
      return extractiveStep(req);
    });
    await rig.start({ daemon: { clock, handoffTtlMs: TTL_MS } });
  });
  afterAll(async () => {
    await rig.close();
  });

  /** A session with two turns and a committed checkpoint, then two more turns after its watermark. */
  async function workedSession(sid: string, beforeMore?: () => void): Promise<void> {
    await rig.client.open(openReq({ session_id: sid, owner: OWNER_OLD }));
    await rig.client.append(sid, conversation(2, { prefix: `${sid}a` }));
    expect((await rig.client.checkpoint(sid)).result).toBe('started');
    await rig.current.daemon.sessions.waitWritersIdle(60_000);
    beforeMore?.();
    await rig.client.append(sid, conversation(2, { prefix: `${sid}b`, start: 9_000 }));
  }

  it('a claimed token opens one session for its owner, again and again, across a restart; another owner, an expired or a guessed token is refused', { timeout: 180_000 }, async () => {
    await workedSession('old');
    const before = sessionOwner(rig.current.log, 'old');
    const grant = await rig.client.handoff('old', { to: 'anthropic-messages', model: { id: 'claude', context_window: 32_000 } });
    expect(grant.expires_at - clock.now()).toBeLessThanOrEqual(TTL_MS);
    expect(grant.basis).toBe('checkpoint+messages');
    // The user's words after the watermark, verbatim; the tool calls as facts; fitted to 32 k.
    const text = viewOf(grant.context[0] as never).text;
    expect(text).toContain('Fix the failing test 1 in src/orders/service-1.ts and keep the API on port 8080.');
    expect(text).toContain("Error: Cannot find module './db-1'");
    expect(countTokensOnce(text)).toBeLessThan(32_000 / 2);

    const first = await rig.client.open(openReq({ handoff: grant.token, owner: OWNER_NEW, api: 'anthropic-messages' }));
    expect(first.resumed).toBe(false);
    expect(first.lineage).toMatchObject({ from_session: 'old', kind: 'handoff', checkpoint_version: grant.checkpoint_version, watermark: grant.watermark });
    expect(first.inherited?.context).toEqual(grant.context);
    const again = await rig.client.open(openReq({ handoff: grant.token, owner: OWNER_NEW, api: 'anthropic-messages' }));
    expect(again).toMatchObject({ session_id: first.session_id, resumed: true });
    expect(JSON.stringify(again.inherited)).toBe(JSON.stringify(first.inherited));
    expect(await refusal(rig.client.open(openReq({ handoff: grant.token, owner: OWNER_OTHER, api: 'anthropic-messages' })))).toBe('forbidden:handoff_used');
    // Its id without the token is no way around the claim either.
    expect(await refusal(rig.client.open(openReq({ session_id: first.session_id, owner: OWNER_OTHER })))).toMatch(/^forbidden/);
    expect(sessionOwner(rig.current.log, 'old')).toBe(before);

    // Expiry: an unclaimed token past its time is refused; the clock is the daemon's.
    const late = await rig.client.handoff('old', { to: 'openai-chat' });
    offset += TTL_MS + 1;
    expect(await refusal(rig.client.open(openReq({ handoff: late.token, owner: OWNER_NEW })))).toBe('forbidden:handoff_expired');

    // 10 000 guessed tokens: all refused alike, and the daemon keeps serving.
    const guesses: Promise<string>[] = [];
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 10_000; i++) {
      guesses.push(refusal(rig.client.open(openReq({ handoff: `bh_${randomBytes(32).toString('base64url')}`, owner: OWNER_NEW }))));
      if (guesses.length === 250 || i === 9_999) {
        for (const o of await Promise.all(guesses.splice(0))) outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
      }
    }
    expect(outcomes).toEqual(new Map([['forbidden:handoff_unknown', 10_000]]));
    expect((await rig.client.status('old')).state.watermark).not.toBeNull();

    // A restart: the index is in the log, the claim and its context too.
    await rig.stopDaemon();
    await rig.start({ daemon: { clock, handoffTtlMs: TTL_MS } });
    const resumed = await rig.client.open(openReq({ handoff: grant.token, owner: OWNER_NEW, api: 'anthropic-messages' }));
    expect(resumed.session_id).toBe(first.session_id);
    expect(JSON.stringify(resumed.inherited)).toBe(JSON.stringify(first.inherited));
    expect(await refusal(rig.client.open(openReq({ handoff: grant.token, owner: OWNER_OTHER, api: 'anthropic-messages' })))).toBe('forbidden:handoff_used');
    const listed = (await rig.client.runtimeSessions()).sessions;
    expect(listed.find((s) => s.session_id === 'old')?.successors).toEqual([{ session_id: first.session_id, kind: 'handoff' }]);
  });

  it('a handoff while a writer runs waits for it, or once its wait runs out, uses the checkpoint and the messages after its watermark', { timeout: 180_000 }, async () => {
    let release = (): void => {};
    // The next writer's model call is held: a writer runs while the handoffs are asked for.
    await workedSession('busy', () => void (gate = new Promise<void>((resolve) => (release = resolve))));
    expect(['started', 'queued']).toContain((await rig.client.checkpoint('busy')).result);
    expect((await rig.client.status('busy')).writer).not.toBeNull();
    // The wait runs out: the last committed checkpoint and what came after it.
    const quick = await rig.client.handoff('busy', { wait_ms: 50 });
    expect(quick).toMatchObject({ writer: 'still_running', basis: 'checkpoint+messages', checkpoint_version: 1 });
    expect(viewOf(quick.context[0] as never).text).toContain('Fix the failing test 1 in src/orders/service-1.ts');
    // Awaited: the handoff's turn in the session comes before the status asked after it, then the writer goes on.
    const awaited = rig.client.handoff('busy', { wait_ms: 120_000 });
    await rig.client.status('busy');
    gate = null;
    release();
    const done = await awaited;
    expect(done.writer).toBe('awaited');
    // From the new checkpoint: its watermark moved on.
    expect(done.checkpoint_version).toBe(2);
    expect(done.watermark).not.toBe(quick.watermark);
  });

  it('the rendered context of a long session fits a 32 k window, the newest user words whole', { timeout: 120_000 }, async () => {
    await rig.client.open(openReq({ session_id: 'long', checkpoint: { enabled: false } }));
    const filler = 'The invoice module computes totals per line, then applies coupons and taxes in that order. ';
    const big = conversation(40, { prefix: 'L' }).map((m) => (m.role === 'tool' ? { ...m, content: filler.repeat(150) } : m.role === 'user' ? { ...m, content: `${typeof m.content === 'string' ? m.content : ''} ${filler.repeat(20)}` } : m));
    await rig.client.append('long', big);
    const grant = await rig.client.handoff('long', { to: 'openai-responses', model: { id: 'gpt-4o', context_window: 32_000 } });
    expect(grant.basis).toBe('messages');
    const text = viewOf(grant.context[0] as never).text;
    expect(countTokensOnce(text)).toBeLessThanOrEqual(10_800);
    const newest = big.at(-4)?.content;
    expect(typeof newest).toBe('string');
    expect(text).toContain(newest as string);
  });

  it('baton handoff prints the handoff base URL; baton sessions and baton replay show the lineage both ways', { timeout: 120_000 }, async () => {
    const nats = ['--nats', rig.nats.url];
    const json = await baton(['handoff', 'old', ...nats, '--to', 'openai-responses', '--gateway', 'http://127.0.0.1:9999', '--json']);
    expect(json.code).toBe(0);
    const reply = JSON.parse(json.stdout[0] ?? '{}') as { base_url: string; token: string; basis: string };
    expect(reply.base_url).toBe(`http://127.0.0.1:9999/h/${reply.token}/v1`);
    const readable = await baton(['handoff', 'old', ...nats, '--to', 'anthropic-messages', '--model', 'claude-test', '--window', '32000']);
    expect(readable.code).toBe(0);
    expect(readable.stdout[0]).toMatch(/^http:\/\/127\.0\.0\.1:8787\/h\/bh_[A-Za-z0-9_-]{43}$/);
    expect(readable.stdout.join('\n')).toContain('checkpoint+messages');
    expect((await baton(['handoff', 'no-such-session', ...nats])).code).toBe(2);
    const sessions = await baton(['sessions', ...nats]);
    expect(sessions.code).toBe(0);
    expect(sessions.stdout.join('\n')).toMatch(/↳ h-[A-Za-z0-9_-]+ continues old \(handoff, from checkpoint v\d+ up to /);
    expect(sessions.stdout.join('\n')).toMatch(/↳ old continued by h-[A-Za-z0-9_-]+ \(handoff\)/);
    await rig.stopDaemon();
    const replay = await baton(['replay', 'old', '--data-dir', rig.dataDir]);
    expect(replay.code).toBe(0);
    expect(replay.stdout.join('\n')).toMatch(/continued by h-[A-Za-z0-9_-]+ \(handoff\)/);
    await rig.start({ daemon: { clock, handoffTtlMs: TTL_MS } });
  });
});
