import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkAgent, agentResponder, isWriterRequest } from './support/gateway-agent.ts';
import { GATEWAY_TOOLS, readChunks, recordTypes, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY_A = 'sk-owner-aaaaaaaaaaaa';
const KEY_B = 'sk-stranger-bbbbbbbbbb';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';

describe('gateway session isolation', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    // Usable window 11 703 − 1 462 − 2 340 = 7 901 tokens (under 8 000: no threshold writers): a few turns overflow it.
    rig = await startGatewayRig({ gateway: { contextWindows: { 'gpt-4o': 11_703 } } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  const sessions = (prefix: string): string[] => [...rig.log.streams('session/')].filter((s) => s.startsWith(`session/${prefix}`)).sort();
  /** The last request the agent's model got (writer calls left out). */
  const lastAgentRequest = () => rig.model.requests.filter((r) => !isWriterRequest(r)).at(-1);

  it('refuses another credential on a session\'s prefix with 403 and forwards and records nothing for it', async () => {
    const sid = 'iso-owner';
    const owner = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    await owner.turn();
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1);
    const exchanges = rig.tap.exchanges.length;
    // Decision records are derived and written lazily (with the next input or after a short idle): left out here.
    const inputs = (): string[] => recordTypes(rig.log, sid).filter((t) => t !== 'decision' && t !== 'snapshot');
    const records = inputs();

    const stolen = JSON.stringify({ model: 'gpt-4o', messages: [...owner.history, { role: 'user', content: 'Show me everything.' }], tools: GATEWAY_TOOLS, stream: true });
    const foreign = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'system', content: 'Other agent.' }, { role: 'user', content: 'hello' }], tools: GATEWAY_TOOLS });
    const attempts: [string, Record<string, string>][] = [
      [stolen, { authorization: `Bearer ${KEY_B}` }],
      [foreign, { authorization: `Bearer ${KEY_B}` }],
      [stolen, { 'x-api-key': KEY_B }],
      [stolen, {}],
    ];
    for (const [body, credential] of attempts) {
      const res = await fetch(`${rig.sessionURL(sid)}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...credential }, body });
      const text = Buffer.concat(await readChunks(res)).toString('utf8');
      expect(res.status).toBe(403);
      expect((JSON.parse(text) as { error: { code: string } }).error.code).toBe('session_forbidden');
      expect(text).not.toContain(KEY_A);
      expect(text).not.toContain(KEY_B);
    }
    // Through the SDK: a PermissionDeniedError.
    const stranger = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_B, system: SYSTEM });
    stranger.history.push({ role: 'user', content: 'hello' });
    await expect(stranger.call()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);

    // Nothing went upstream, nothing was recorded, no slice was opened.
    expect(rig.tap.exchanges).toHaveLength(exchanges);
    expect(inputs()).toEqual(records);
    expect(sessions(sid)).toEqual([`session/${sid}`]);
    // The owner goes on as before.
    await owner.turn();
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1);
  });

  it('a session is bound to the first credential the upstream accepted, not to the first one tried', async () => {
    const sid = 'iso-first-key';
    rig.model.script({ error: { status: 401, message: 'Incorrect API key provided.' } });
    const wrong = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: 'sk-mistyped', system: SYSTEM });
    wrong.history.push({ role: 'user', content: 'Please look at src/mod-1.ts and fix the reducer.' });
    await expect(wrong.call()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    // The user fixes the key: the session is theirs.
    const owner = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    await owner.turn();
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1);
    // From now on another credential is refused.
    await expect(wrong.call()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });

  it('keeps apart fingerprinted sessions (no session in the URL) of two credentials that open the same way', async () => {
    const a = new SdkAgent({ baseURL: rig.gateway.baseURL, apiKey: KEY_A, system: 'Fingerprint agent.' });
    const b = new SdkAgent({ baseURL: rig.gateway.baseURL, apiKey: KEY_B, system: 'Fingerprint agent.' });
    const before = new Set(rig.log.streams('session/'));
    await a.turn();
    await b.turn();
    await a.turn();
    await until(() => [...rig.log.streams('session/')].filter((s) => !before.has(s)).length === 2);
    const opened = [...rig.log.streams('session/')].filter((s) => !before.has(s)).map((s) => s.slice('session/'.length));
    await until(() => opened.map((s) => recordedMessages(rig.log, s).length).sort().join() === [b.sentLength - 1, a.sentLength - 1].sort().join());
  });

  it('a foreign history on a session\'s prefix with the owner\'s credential never gets its rebuilt context and never adds to it; the owner keeps its rewrite', { timeout: 120_000 }, async () => {
    const sid = 'iso-stolen';
    const owner = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    // Turns until the gateway rewrites the owner's requests onto the rebuilt context.
    do {
      await owner.turn();
      if (owner.history.length > 40) throw new Error('no overflow');
    } while (lastAgentRequest()?.body.messages.length === owner.sentLength);
    const rewritten = lastAgentRequest();
    if (rewritten === undefined) throw new Error('no request');
    const boundary = JSON.stringify(rewritten.body.messages[1]);
    expect(boundary).toContain('## Checkpoint');
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1);
    const ownerRecorded = recordedMessages(rig.log, sid).length;

    // Another conversation on the same prefix and key (a sub-agent, a second window, a stolen URL).
    const other = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    other.history.push({ role: 'user', content: 'Unrelated: what does src/billing/invoice.ts export?' });
    await other.call();
    const otherRequest = lastAgentRequest();
    // Forwarded as the agent sent it: none of the session's rebuilt context.
    expect(otherRequest?.body.messages).toEqual(other.history.slice(0, other.sentLength));
    expect(otherRequest?.rawBody).not.toContain('## Checkpoint');
    await other.call();
    await until(() => recordedMessages(rig.log, `${sid}-s1`).length === other.sentLength - 1);
    expect(recordedMessages(rig.log, sid)).toHaveLength(ownerRecorded);

    // A third conversation whose first call fails: its slice records nothing, and does not swallow the owner's calls.
    rig.model.script({ error: { status: 429, message: 'Rate limit reached' } });
    const third = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY_A, system: SYSTEM });
    third.history.push({ role: 'user', content: 'Third conversation.' });
    await expect(third.call()).rejects.toBeInstanceOf(OpenAI.RateLimitError);

    // The owner goes on: still rewritten onto its rebuilt context, with the same prefix bytes, recorded in its session.
    owner.history.push({ role: 'user', content: 'Good. Now run the tests.' });
    await owner.call();
    const after = lastAgentRequest();
    expect(after?.body.messages.length).toBeLessThan(owner.sentLength);
    expect(JSON.stringify(after?.body.messages[1])).toBe(boundary);
    const span = (raw: string): string => raw.slice(0, raw.indexOf(JSON.stringify(rewritten.body.messages[1])) + boundary.length);
    expect(span(after?.rawBody ?? '')).toBe(span(rewritten.rawBody));
    await until(() => recordedMessages(rig.log, sid).length === owner.sentLength - 1);
    // And the other conversation keeps its own slice.
    other.history.push({ role: 'user', content: 'And src/billing/tax.ts?' });
    await other.call();
    await until(() => recordedMessages(rig.log, `${sid}-s1`).length === other.sentLength - 1);
    expect(sessions(sid)).toEqual([`session/${sid}`, `session/${sid}-s1`, `session/${sid}-s2`]);
    expect(recordedMessages(rig.log, `${sid}-s2`)).toEqual([]);
    for (const s of [sid, `${sid}-s1`]) {
      const ids = recordedMessages(rig.log, s).map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
    }
    expect(JSON.stringify(recordedMessages(rig.log, sid))).not.toContain('invoice.ts');
  });

  it('opens the session in the project the agent names in x-baton-project, else in the gateway\'s', async () => {
    const named = new SdkAgent({ baseURL: rig.sessionURL('proj-named'), apiKey: KEY_A, system: SYSTEM, headers: { 'x-baton-project': 'warehouse' } });
    const plain = new SdkAgent({ baseURL: rig.sessionURL('proj-plain'), apiKey: KEY_A, system: SYSTEM, headers: { 'x-baton-project': 'not a/project' } });
    await named.turn();
    await plain.turn();
    const projectOf = (sid: string): unknown => ([...rig.log.read(`session/${sid}`)][0]?.payload as { request: { project_id: string } }).request.project_id;
    expect(projectOf('proj-named')).toBe('warehouse');
    expect(projectOf('proj-plain')).toBe('default');
  });
});
