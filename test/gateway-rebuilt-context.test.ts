import { BatonGateway } from '@baton/gateway';
import type { Message } from '@baton/protocol';
import { viewOf } from '@baton/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkAgent, agentResponder } from './support/gateway-agent.ts';
import { readChunks, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY = 'sk-rebuilt-context-00000';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';

/**
 * A rebuilt context stands on its own when the agent is not on the daemon's machine: through a gateway in `remote`
 * mode the agent's compaction is answered with the checkpoint itself and no path of the data dir (nothing it could not
 * read); an agent on loopback under `auto` still gets the path of the full checkpoint.
 */
describe('gateway: what a rebuilt context refers to', () => {
  let rig: GatewayRig;
  let remote: BatonGateway;
  beforeAll(async () => {
    rig = await startGatewayRig();
    rig.model.setResponder(agentResponder);
    remote = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, ownerSecret: rig.ownerSecret, rebuiltContext: 'remote' });
  });
  afterAll(async () => {
    await remote.close();
    await rig.stop();
  });

  /** Two turns on `sid` through `origin`, a checkpoint written, then the agent's own compaction: the summary it got. */
  async function compacted(origin: string, sid: string): Promise<string> {
    const agent = new SdkAgent({ baseURL: `${origin}/s/${sid}/v1`, apiKey: KEY, system: SYSTEM });
    await agent.turn();
    await agent.turn();
    await until(() => recordedMessages(rig.log, sid).length === agent.sentLength - 1);
    expect((await rig.client.checkpoint(sid)).result).toBe('started');
    await rig.daemon.sessions.waitWritersIdle(60_000);
    expect((await rig.client.status(sid)).files.checkpoint.exists).toBe(true);
    const res = await fetch(`${origin}/s/${sid}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      // The agent's own compaction: its history under a system prompt asking for a summary, no tools.
      body: JSON.stringify({
        model: 'gpt-4o',
        messages: [{ role: 'system', content: 'Summarize the conversation so far for a handoff.' }, ...agent.history.slice(1), { role: 'user', content: 'Summarize.' }],
      }),
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(Buffer.concat(await readChunks(res)).toString('utf8')) as { choices: { message: { content: string } }[] };
    return body.choices[0]?.message.content ?? '';
  }

  /** The boundary messages the session's rebuilds inserted, as logged. */
  function boundaries(sid: string): string[] {
    return [...rig.log.read(`session/${sid}`)]
      .filter((r) => r.type === 'rebuild.rendered')
      .map((r) => (r.payload as { message?: Message }).message)
      .flatMap((m) => (m === undefined ? [] : [viewOf(m).text]));
  }

  it('remote: the summary is the checkpoint, naming no path of the data dir', { timeout: 120_000 }, async () => {
    const summary = await compacted(remote.baseURL.replace(/\/v1$/, ''), 'far-away');
    expect(summary).toContain('## Session checkpoint');
    expect(summary).not.toContain(rig.dataDir);
    expect(summary).not.toMatch(/checkpoint\.md|read\(/);
    expect(summary).not.toContain('## Memory keys index');
    const logged = boundaries('far-away');
    expect(logged).toHaveLength(1);
    expect(logged[0]).not.toContain(rig.dataDir);
  });

  it('remote: a request rewritten on overflow carries the checkpoint and no path of the data dir', { timeout: 120_000 }, async () => {
    // A small window: a few turns of file reads overflow it, once a checkpoint exists to rebuild from.
    const small = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, ownerSecret: rig.ownerSecret, rebuiltContext: 'remote', contextWindows: { 'gpt-4o': 12_000 } });
    try {
      const sid = 'far-overflow';
      const agent = new SdkAgent({ baseURL: `${small.baseURL.replace(/\/v1$/, '')}/s/${sid}/v1`, apiKey: KEY, system: SYSTEM });
      await agent.turn();
      await until(() => recordedMessages(rig.log, sid).length === agent.sentLength - 1);
      await rig.client.checkpoint(sid);
      await rig.daemon.sessions.waitWritersIdle(60_000);
      expect((await rig.client.status(sid)).files.checkpoint.exists).toBe(true);
      const before = rig.tap.exchanges.length;
      for (let i = 0; i < 4 && boundaries(sid).length === 0; i++) await agent.turn();
      const logged = boundaries(sid);
      expect(logged.length).toBeGreaterThan(0);
      expect(logged.every((text) => !text.includes(rig.dataDir))).toBe(true);
      // What went upstream after the rebuild: the boundary with the checkpoint in it, no path of the daemon's disk.
      const sent = rig.tap.exchanges.slice(before).map((e) => e.body.toString('utf8'));
      expect(sent.some((body) => body.includes('## Session checkpoint'))).toBe(true);
      for (const body of sent) expect(body).not.toContain(rig.dataDir);
    } finally {
      await small.close();
    }
  });

  it('auto, an agent on loopback: the summary says where the full checkpoint is', { timeout: 120_000 }, async () => {
    const summary = await compacted(rig.origin, 'next-door');
    expect(summary).toContain('## Session checkpoint');
    expect(summary).toContain(`read("${rig.dataDir}`);
  });
});
