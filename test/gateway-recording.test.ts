import { BatonClient, type Transport } from '@baton/client';
import { BatonGateway, GatewayMetrics } from '@baton/gateway';
import { contentTypeHeaders, encodeRequest, type Message } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionsTable } from '../packages/cli/src/format/runtime-format.ts';
import { SdkAgent, agentResponder } from './support/gateway-agent.ts';
import { recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY = 'sk-recording-000000000';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
const MODEL = 'gpt-4.1';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** A base64 "screenshot" of `bytes` bytes (deterministic, not compressible into a short run). */
function screenshot(bytes: number, seed: number): string {
  const raw = Buffer.alloc(Math.ceil((bytes * 3) / 4));
  let x = seed;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1_103_515_245 + 12_345) >>> 0;
    raw[i] = x >>> 24;
  }
  return raw.toString('base64').slice(0, bytes);
}

/** What the daemon recorded of a chat history, in the shape the agent sent it (role, content, tool call ids). */
const shape = (m: Message | Msg): string => JSON.stringify([m.role, m.content ?? null, (m as { tool_call_id?: string }).tool_call_id ?? null]);

/** A transport that answers the daemon's append and part requests itself, with an error reply, while `refusing`. */
function refusingTransport(inner: Transport): Transport & { refusing: boolean; refused: number } {
  const wrapper = {
    refusing: false,
    refused: 0,
    get maxPayload() {
      return inner.maxPayload;
    },
    subscribe: inner.subscribe.bind(inner),
    publish: inner.publish.bind(inner),
    flush: inner.flush.bind(inner),
    close: async () => {},
    async request(subject: string, data: Uint8Array, options?: Parameters<Transport['request']>[2]) {
      if (wrapper.refusing && /\.(append|part)$/.test(subject)) {
        wrapper.refused++;
        return { data: encodeRequest({ ok: false, error: { code: 'unavailable', message: 'injected: the daemon is not taking appends' } }, 'msgpack'), headers: contentTypeHeaders('msgpack') };
      }
      return await inner.request(subject, data, options);
    },
  };
  return wrapper;
}

describe('gateway: every message is recorded, whatever its size, and a failed recording is retried', () => {
  let rig: GatewayRig;
  const warnings: { msg: string; data: Record<string, unknown> | undefined }[] = [];
  beforeAll(async () => {
    // A real nats-server: its max payload (1 MiB) is what a large message meets.
    rig = await startGatewayRig({ nats: true, gateway: { contextWindows: { [MODEL]: 1_047_576 } } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('records a 1.1 MB tool output and every turn after it; the session replays', { timeout: 180_000 }, async () => {
    const sid = 'big-output';
    expect(rig.clientTransport.maxPayload).toBe(1024 * 1024);
    const agent = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM, model: MODEL });
    agent.history.push({ role: 'user', content: 'Take a screenshot of the failing page and tell me what is wrong.' });
    const { message } = await agent.call();
    const big = screenshot(1_100_000, 7);
    agent.history.push({ role: 'tool', tool_call_id: message.tool_calls?.[0]?.id ?? 'call-0', content: `data:image/png;base64,${big}` });
    await agent.call();
    await agent.turn();
    await agent.turn();
    await until(() => recordedMessages(rig.log, sid).length === agent.sentLength - 1, 60_000);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded.map(shape)).toEqual(agent.history.slice(1, agent.sentLength).map(shape));
    expect(recorded.find((m) => typeof m.content === 'string' && m.content.length > 1_000_000)?.content).toBe(`data:image/png;base64,${big}`);
    await rig.daemon.sessions.waitWritersIdle(60_000);
    await rig.daemon.sessions.flushDecisions();
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });

  it('records a 3 MB history of 1 200 messages a gateway sees for the first time, and a turn after it, in batches under the limits', { timeout: 180_000 }, async () => {
    const sid = 'long-history';
    const agent = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM, model: MODEL });
    // A conversation held elsewhere until now (another gateway's, or the provider's alone): 400 tool steps.
    for (let i = 0; i < 400; i++) {
      const id = `call_${i}`;
      agent.history.push({ role: 'user', content: `Step ${i}: read src/part-${i}.ts.` });
      agent.history.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ file_path: `src/part-${i}.ts` }) } }] });
      agent.history.push({ role: 'tool', tool_call_id: id, content: screenshot(7_600, i) });
    }
    expect(Buffer.byteLength(JSON.stringify(agent.history))).toBeGreaterThan(3_000_000);
    await agent.turn();
    await until(() => recordedMessages(rig.log, sid).length === agent.sentLength - 1, 120_000);
    const recorded = recordedMessages(rig.log, sid);
    expect(recorded).toHaveLength(1_203);
    expect(recorded.map(shape)).toEqual(agent.history.slice(1, agent.sentLength).map(shape));
    // Several appends, none over 1 000 messages.
    const appends = [...rig.log.read(`session/${sid}`)].filter((r) => r.type === 'messages.appended').map((r) => (r.payload as { messages: unknown[] }).messages.length);
    expect(appends.length).toBeGreaterThan(3);
    expect(Math.max(...appends)).toBeLessThanOrEqual(1_000);
    await rig.daemon.sessions.waitWritersIdle(60_000);
    await rig.daemon.sessions.flushDecisions();
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });

  it('marks the session stalled when the daemon refuses its appends (a warning naming it, a metric, baton sessions) and records from the first missing message on its next call', { timeout: 120_000 }, async () => {
    const sid = 'refused';
    const transport = refusingTransport(rig.clientTransport);
    const metrics = new GatewayMetrics();
    const gateway = await BatonGateway.start({
      upstream: rig.tap.url,
      client: new BatonClient(transport),
      ownerSecret: rig.ownerSecret,
      metrics,
      // As `baton up` does: the embedded daemon lists the session as stalled.
      recordingStalled: (id, stalled) => rig.daemon.sessions.setRecordingStalled(id, stalled),
      logger: (level, msg, data) => {
        if (level === 'warn') warnings.push({ msg, data });
      },
    });
    const stalled = async (): Promise<number> => (await metrics.registry.getSingleMetric('baton_gateway_recording_stalled_sessions')?.get())?.values[0]?.value ?? -1;
    try {
      const agent = new SdkAgent({ baseURL: gateway.baseURL.replace(/\/v1$/, `/s/${sid}/v1`), apiKey: KEY, system: SYSTEM });
      await agent.turn();
      await until(() => recordedMessages(rig.log, sid).length === agent.sentLength - 1);
      const before = recordedMessages(rig.log, sid).length;

      // The daemon stops taking appends: the agent's calls still go through, the session is marked stalled.
      transport.refusing = true;
      await agent.turn();
      await agent.turn();
      await until(() => warnings.some((w) => w.msg.startsWith('recording stalled') && w.data?.['daemonSession'] === sid));
      expect(transport.refused).toBeGreaterThan(0);
      expect(recordedMessages(rig.log, sid)).toHaveLength(before);
      expect(await stalled()).toBe(1);
      const listed = async () => (await rig.client.runtimeSessions({ limit: 1_000 })).sessions.find((x) => x.session_id === sid);
      expect((await listed())?.recording).toBe('stalled');
      expect(sessionsTable({ sessions: [(await listed())!] }).join('\n')).toContain(`! ${sid}: recording stalled`);

      // It takes them again: the next call records everything from the first missing message on, in order, once.
      transport.refusing = false;
      await agent.turn();
      await until(() => recordedMessages(rig.log, sid).length === agent.sentLength - 1);
      const recorded = recordedMessages(rig.log, sid);
      expect(recorded.map(shape)).toEqual(agent.history.slice(1, agent.sentLength).map(shape));
      expect(new Set(recorded.map((m) => m.id)).size).toBe(recorded.length);
      expect(await stalled()).toBe(0);
      expect((await listed())?.recording).toBeUndefined();
      await rig.daemon.sessions.flushDecisions();
      expect(verifySession(rig.log, sid).divergence).toBeNull();
    } finally {
      await gateway.close();
    }
  });
});
