import { BatonGateway } from '@baton/gateway';
import { countTokensOnce } from '@baton/memory-store';
import { viewOf, type Message } from '@baton/protocol';
import { sessionOwner, verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicAgent, ResponsesAgent } from './support/api-agents.ts';
import { SdkAgent, agentResponder } from './support/gateway-agent.ts';
import { recordedMessages, startGatewayRig, until, type Exchange, type GatewayRig } from './support/gateway-rig.ts';

const KEY_A = 'sk-pi-aaaaaaaaaaaaaaaaaaaa';
const KEY_B = 'sk-codex-bbbbbbbbbbbbbbbbb';
const KEY_C = 'sk-claude-ccccccccccccccccc';
const KEY_D = 'sk-back-to-pi-ddddddddddd';
const KEY_X = 'sk-stranger-xxxxxxxxxxxxx';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
/** The user's words after the first session's checkpoint: they must reach every later agent verbatim. */
const LATE_WORDS = 'Also: the CLI flag must be renamed to --dry-run-all before the release, and keep port 8080.';
const WINDOW_32K = { id: 'gpt-4o', context_window: 32_000 };

type Item = Record<string, unknown>;

/** The JSON body of a tapped request. */
const bodyOf = (ex: Exchange): Item => JSON.parse(ex.body.toString('utf8')) as Item;

/** The tapped model requests of one credential (writers call with the daemon's key), in order. */
function callsOf(rig: GatewayRig, key: string): Item[] {
  return rig.tap.exchanges.filter((ex) => ex.headers['authorization'] === `Bearer ${key}` || ex.headers['x-api-key'] === key).map(bodyOf);
}

/** The text of a content value (a string, or blocks / parts with text). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (typeof (b as Item)['text'] === 'string' ? ((b as Item)['text'] as string) : '')).join('\n');
}

describe('gateway: handing a session to another agent, in another API, from its checkpoint', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig({ nats: true });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('chat → Responses → Anthropic → chat: each first request carries the context after its system prompt, the same bytes every time, and lineage shows the chain', { timeout: 240_000 }, async () => {
    // A: a chat agent works two turns; a checkpoint covers them; the user says more after it.
    const a = new SdkAgent({ baseURL: rig.sessionURL('task-a'), apiKey: KEY_A, system: SYSTEM });
    await a.turn();
    await a.turn();
    await until(() => recordedMessages(rig.log, 'task-a').length === a.sentLength - 1);
    expect((await rig.client.checkpoint('task-a')).result).toBe('started');
    await rig.daemon.sessions.waitWritersIdle(120_000);
    expect((await rig.client.status('task-a')).files.checkpoint.exists).toBe(true);
    a.history.push({ role: 'user', content: LATE_WORDS });
    await a.call();
    await until(() => recordedMessages(rig.log, 'task-a').some((m) => textOf(m.content).includes('--dry-run-all')));
    const ownerA = sessionOwner(rig.log, 'task-a');

    const grant = await rig.client.handoff('task-a', { to: 'openai-responses', model: WINDOW_32K });
    expect(grant.token).toMatch(/^bh_[A-Za-z0-9_-]{43}$/);
    expect(grant.basis).toBe('checkpoint+messages');
    expect(grant.writer).toBe('none');
    expect(grant.checkpoint_version).toBeGreaterThanOrEqual(1);
    expect(grant.context).toHaveLength(1);
    const handed = grant.context[0] as Message;
    const view = viewOf(handed);
    // Text facts only: the old agent's tool call and its result are named in words, never as calls or results.
    expect(view.role).toBe('user');
    expect(view.toolCalls).toEqual([]);
    expect(view.toolResults).toEqual([]);
    expect(view.text).toContain(LATE_WORDS);
    expect(view.text).toContain('ran read_file');
    // Fitted to the target: half of a 32 k window's usable part at most.
    expect(countTokensOnce(view.text)).toBeLessThanOrEqual(10_800);
    // The token is never stored: only its digest.
    for (const r of rig.log.read('session/task-a')) expect(JSON.stringify(r.payload)).not.toContain(grant.token);

    // B: a Responses agent with another key continues from the handoff base URL.
    const b = new ResponsesAgent({ baseURL: `${rig.origin}/h/${grant.token}/v1`, apiKey: KEY_B, system: 'You are Codex.' });
    await b.turn();
    const bCalls = callsOf(rig, KEY_B);
    expect(bCalls.length).toBeGreaterThanOrEqual(2);
    const inserted = bCalls.map((c) => JSON.stringify((c['input'] as Item[])[1]));
    expect(textOf((bCalls[0]?.['input'] as Item[])[0]?.['content'])).toBe('You are Codex.');
    expect(inserted[0]).toContain('--dry-run-all');
    expect(new Set(inserted).size).toBe(1);
    // Only the agent's own items are recorded: the inherited context is the session's opening.
    const sessions = (await rig.client.runtimeSessions()).sessions;
    const bSession = sessions.find((s) => s.lineage?.from_session === 'task-a');
    expect(bSession?.lineage).toMatchObject({ kind: 'handoff', checkpoint_version: grant.checkpoint_version, watermark: grant.watermark });
    const bId = bSession?.session_id ?? '';
    await until(() => recordedMessages(rig.log, bId).length === b.sentLength - 1);
    expect(recordedMessages(rig.log, bId).every((m) => !JSON.stringify(m).includes('--dry-run-all'))).toBe(true);
    expect(sessions.find((s) => s.session_id === 'task-a')?.successors).toEqual([{ session_id: bId, kind: 'handoff' }]);
    // The old session's owner is untouched; another credential on the same URL is refused; B goes on.
    expect(sessionOwner(rig.log, 'task-a')).toBe(ownerA);
    const stranger = await fetch(`${rig.origin}/h/${grant.token}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_X}` },
      body: JSON.stringify({ model: 'gpt-4o', input: 'hi', tools: [{ type: 'function', name: 'read_file', parameters: { type: 'object', properties: {} } }] }),
    });
    expect(stranger.status).toBe(403);
    expect(((await stranger.json()) as { error: { code: string } }).error.code).toBe('handoff_used');

    // C: an Anthropic agent continues from B's session; the first session's words come along the chain.
    const grantC = await rig.client.handoff(bId, { to: 'anthropic-messages', model: WINDOW_32K });
    expect(grantC.basis).toBe('messages');
    const c = new AnthropicAgent({ baseURL: `${rig.origin}/h/${grantC.token}`, apiKey: KEY_C, system: 'You are Claude Code.' });
    await c.turn();
    const cCalls = callsOf(rig, KEY_C);
    const firstTurns = cCalls.map((call) => JSON.stringify((call['messages'] as Item[])[0]));
    const first = (cCalls[0]?.['messages'] as Item[])[0] as Item;
    // One user turn: the inherited context joined with the agent's own first turn, so roles alternate.
    expect(first['role']).toBe('user');
    expect(textOf(first['content'])).toContain('--dry-run-all');
    expect(textOf(first['content'])).toContain('Please look at src/mod-1.ts');
    expect((cCalls[0]?.['messages'] as Item[]).length).toBe(1);
    expect((cCalls[1]?.['messages'] as Item[])[1]?.['role']).toBe('assistant');
    // The agent's breakpoint moves to its newest turn: the inherited blocks stay the same bytes.
    expect(new Set(firstTurns.map((t) => t.replace(/,"cache_control":\{"type":"ephemeral"\}/g, ''))).size).toBe(1);

    // D: back to a chat agent, from C's session.
    const cId = (await rig.client.runtimeSessions()).sessions.find((s) => s.lineage?.from_session === bId)?.session_id ?? '';
    const grantD = await rig.client.handoff(cId, { to: 'openai-chat', model: WINDOW_32K });
    const d = new SdkAgent({ baseURL: `${rig.origin}/h/${grantD.token}/v1`, apiKey: KEY_D, system: 'You are pi.' });
    await d.turn();
    const dInserted = (): string[] => callsOf(rig, KEY_D).map((call) => JSON.stringify((call['messages'] as Item[])[1]));
    expect(dInserted()[0]).toContain('--dry-run-all');
    expect((callsOf(rig, KEY_D)[0]?.['messages'] as Item[])[0]).toEqual({ role: 'system', content: 'You are pi.' });

    // A gateway restart: the next request carries the same bytes, read back from the session's opening.
    const port = rig.gateway.port;
    await rig.gateway.close();
    const again = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, ownerSecret: rig.ownerSecret, port });
    try {
      await d.turn();
      expect(new Set(dInserted()).size).toBe(1);
      expect(dInserted().length).toBeGreaterThanOrEqual(4);
    } finally {
      await again.close();
    }
    // Lineage both ways, along the whole chain.
    const listed = new Map((await rig.client.runtimeSessions()).sessions.map((s) => [s.session_id, s]));
    expect(listed.get(bId)?.successors).toEqual([{ session_id: cId, kind: 'handoff' }]);
    expect(listed.get(cId)?.lineage?.from_session).toBe(bId);
    expect([...listed.values()].filter((l) => l.lineage?.from_session === cId)).toHaveLength(1);
    // Every session of the chain replays to what the daemon decided, the old one with its grant and successor records.
    await rig.daemon.sessions.flushDecisions();
    for (const id of ['task-a', bId, cId]) expect(verifySession(rig.log, id).divergence).toBeNull();
  });

  it('--resume-empty: an agent that starts over on its session name gets the session rebuilt after its system prompt (lineage resume)', { timeout: 180_000 }, async () => {
    const resuming = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, ownerSecret: rig.ownerSecret, resumeEmpty: true });
    try {
      const url = `${resuming.baseURL.replace(/\/v1$/, '')}/s/resume-me/v1`;
      const before = new SdkAgent({ baseURL: url, apiKey: KEY_A, system: SYSTEM });
      await before.turn();
      await before.turn();
      await until(() => recordedMessages(rig.log, 'resume-me').length === before.sentLength - 1);
      // A fresh process: the same system prompt, nothing but its new request.
      const after = new SdkAgent({ baseURL: url, apiKey: KEY_A, system: SYSTEM });
      const seen = callsOf(rig, KEY_A).length;
      await after.turn();
      const calls = callsOf(rig, KEY_A).slice(seen);
      const inserted = calls.map((c) => (c['messages'] as Item[])[1] as Item);
      expect(inserted[0]?.['role']).toBe('user');
      expect(textOf(inserted[0]?.['content'])).toContain('Please look at src/mod-2.ts and fix the reducer.');
      expect(textOf(inserted[0]?.['content'])).toContain('ran read_file');
      expect(new Set(inserted.map((m) => JSON.stringify(m))).size).toBe(1);
      expect((calls[0]?.['messages'] as Item[])[2]).toEqual({ role: 'user', content: 'Please look at src/mod-1.ts and fix the reducer.' });
      const listed = (await rig.client.runtimeSessions()).sessions;
      const resumed = listed.find((s) => s.lineage?.from_session === 'resume-me');
      expect(resumed?.lineage?.kind).toBe('resume');
      expect(listed.find((s) => s.session_id === 'resume-me')?.successors).toEqual([{ session_id: resumed?.session_id, kind: 'resume' }]);
    } finally {
      await resuming.close();
    }
  });
});
