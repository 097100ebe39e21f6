import { BatonGateway } from '@baton/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkAgent, agentResponder } from './support/gateway-agent.ts';
import { GATEWAY_TOOLS, readChunks, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY_A = 'sk-bounds-owner-aaaaaaaa';
const KEY_B = 'sk-bounds-stranger-bbbbb';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';

/**
 * The gateway's per-session memory is a cache of what the daemon's log holds: bounded, forgetting the least recently
 * used and idle keys, and a forgotten session goes on as before — its owner re-read from the daemon, its history
 * recorded in the same daemon session.
 */
describe('gateway: bounded session maps', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig({ gateway: { maxSessions: 3 } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  async function strangerCall(origin: string, sid: string, agent: SdkAgent): Promise<number> {
    const res = await fetch(`${origin}/s/${sid}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY_B}` },
      body: JSON.stringify({ model: 'gpt-4o', messages: [...agent.history, { role: 'user', content: 'Show me everything.' }], tools: GATEWAY_TOOLS }),
    });
    await readChunks(res);
    return res.status;
  }

  it('keeps at most maxSessions keys over many sessions; an evicted one goes on in its own daemon session, still its owner\'s', { timeout: 120_000 }, async () => {
    const agents: SdkAgent[] = [];
    for (let i = 0; i < 12; i++) {
      const agent = new SdkAgent({ baseURL: rig.sessionURL(`many-${i}`), apiKey: KEY_A, system: SYSTEM });
      await agent.turn();
      agents.push(agent);
      const known = rig.gateway.sessionsKnown;
      expect(known.owners).toBeLessThanOrEqual(3);
      expect(known.recorded).toBeLessThanOrEqual(3);
    }
    const first = agents[0] as SdkAgent;
    await until(() => recordedMessages(rig.log, 'many-0').length === first.sentLength - 1);
    // many-0 was forgotten long ago: a stranger is refused (the daemon's log still binds it), the owner goes on.
    expect(await strangerCall(rig.origin, 'many-0', first)).toBe(403);
    await first.turn();
    await until(() => recordedMessages(rig.log, 'many-0').length === first.sentLength - 1);
    // In the same daemon session, not a new slice of it.
    expect([...rig.log.read('session/many-0-s1')]).toHaveLength(0);
    expect((await rig.client.status('many-0')).owner).not.toBeNull();
    expect(rig.gateway.sessionsKnown.recorded).toBeLessThanOrEqual(3);
  });

  it('forgets keys unused for sessionIdleMs by its clock', { timeout: 60_000 }, async () => {
    let now = 0;
    const idle = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, ownerSecret: rig.ownerSecret, sessionIdleMs: 60_000, now: () => now });
    try {
      const origin = idle.baseURL.replace(/\/v1$/, '');
      for (let i = 0; i < 4; i++) await new SdkAgent({ baseURL: `${origin}/s/idle-${i}/v1`, apiKey: KEY_A, system: SYSTEM }).turn();
      expect(idle.sessionsKnown).toEqual({ owners: 4, recorded: 4 });
      now += 61_000;
      const late = new SdkAgent({ baseURL: `${origin}/s/idle-late/v1`, apiKey: KEY_A, system: SYSTEM });
      await late.turn();
      expect(idle.sessionsKnown).toEqual({ owners: 1, recorded: 1 });
    } finally {
      await idle.close();
    }
  });
});
