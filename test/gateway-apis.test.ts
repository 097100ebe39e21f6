import type { Message } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import type { RecordedRequest } from '@baton/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicAgent, ResponsesAgent } from './support/api-agents.ts';
import { agentResponder, isWriterRequest } from './support/gateway-agent.ts';
import { recordedMessages, startGatewayRig, until, type Exchange, type GatewayRig } from './support/gateway-rig.ts';

type Item = Record<string, unknown>;

const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
/** 37 036 tokens: usable 25 000 (reserves of 12.5 % and 20 % of the window), threshold writers at 5 000, 10 000 and 12 000. */
const WINDOWS = { 'gpt-4o': 37_036, 'claude-test': 37_036 };

const bodyOf = (e: Exchange): Item => JSON.parse(e.body.toString('utf8')) as Item;
const textOf = (item: Item | undefined): string => {
  const content = item?.['content'];
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as Item[]).map((p) => (typeof p['text'] === 'string' ? p['text'] : '')).join('') : '';
};
const hasBreakpoint = (v: unknown): boolean => JSON.stringify(v).includes('"cache_control"');

/** Agent calls through the tap (the daemon's writers call the model directly). */
const agentCalls = (rig: GatewayRig, path: string): Exchange[] => rig.tap.exchanges.filter((e) => e.path.endsWith(path));

/** Writer requests the loopback got in `api`, and what they logged. */
function writerRuns(rig: GatewayRig, api: RecordedRequest['api']): RecordedRequest[] {
  return rig.model.requests.filter((r) => r.api === api && isWriterRequest(r));
}

function writerStreams(rig: GatewayRig, sid: string): { mode: string | undefined; outcome: string | undefined; cached: number[] }[] {
  const settled = [...rig.log.read(`session/${sid}`)].filter((r) => r.type === 'writer.settled').map((r) => r.payload as { writerId: string; outcome: string });
  return settled.map(({ writerId, outcome }) => {
    const records = [...rig.log.read(`writer/${writerId}`)];
    const started = records[0]?.payload as { input?: { mode?: string } } | undefined;
    const cached = records.filter((r) => r.type === 'model.replied').map((r) => (r.payload as { usage: { cached: number } }).usage.cached);
    return { mode: started?.input?.mode, outcome, cached };
  });
}

describe('gateway: OpenAI Responses and Anthropic Messages sessions', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig({ gateway: { contextWindows: WINDOWS } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('Responses: records the items verbatim, forks writers from them, rewrites onto the rebuilt context and answers a Codex compaction from the checkpoint', { timeout: 180_000 }, async () => {
    const sid = 'resp';
    const agent = new ResponsesAgent({ baseURL: rig.sessionURL(sid), apiKey: 'sk-resp-1', system: SYSTEM });
    const calls = (): Exchange[] => agentCalls(rig, '/responses');
    const rewrittenAt = (): number => calls().findIndex((e) => textOf((bodyOf(e)['input'] as Item[])[1]).startsWith('## Checkpoint'));
    for (let turn = 0; turn < 40 && (rewrittenAt() < 0 || calls().length - rewrittenAt() < 4); turn++) await agent.turn(turn % 2 === 1);
    expect(rewrittenAt()).toBeGreaterThan(0);

    // The session is a Responses session: its system prompt is the agent's developer item, its request fields kept.
    const opened = [...rig.log.read(`session/${sid}`)][0]?.payload as { setup: { api?: string; system: unknown; params?: Item } };
    expect(opened.setup.api).toBe('openai-responses');
    expect(opened.setup.system).toEqual([agent.input[0]]);
    expect(opened.setup.params).toMatchObject({ prompt_cache_key: 'agent-thread-1' });

    // Every item after the system prompt is recorded once, in its native form; replies carry the Responses usage.
    await until(() => recordedMessages(rig.log, sid).length >= agent.input.length - 2);
    const recorded = recordedMessages(rig.log, sid);
    expect(new Set(recorded.map((m) => m.id)).size).toBe(recorded.length);
    recorded.forEach((m: Message, i) => {
      expect(m.content).toBeNull();
      expect(m.native).toEqual(agent.input[i + 1]);
    });
    expect(recorded.some((m) => m.usage !== undefined && 'input_tokens' in m.usage)).toBe(true);

    // From the rewrite on: the developer item, then the rebuilt context (a user item of text), every later request
    // repeating the same prefix bytes.
    const first = calls()[rewrittenAt()] as Exchange;
    const input = bodyOf(first)['input'] as Item[];
    expect(input[0]).toEqual(agent.input[0]);
    expect(input[1]).toMatchObject({ type: 'message', role: 'user' });
    const prefix = first.body.toString('utf8').slice(0, first.body.toString('utf8').indexOf(JSON.stringify(input[2])));
    for (const later of calls().slice(rewrittenAt() + 1)) expect(later.body.toString('utf8').startsWith(prefix)).toBe(true);

    // Writers ran in fork mode in the Responses API: their input starts with items an agent request carried, as sent.
    const writers = writerRuns(rig, 'openai-responses');
    expect(writers.length).toBeGreaterThan(0);
    const sentInputs = calls().map((e) => (bodyOf(e)['input'] as Item[]).map((i) => JSON.stringify(i)));
    for (const w of writers.filter((r) => r.conversation.items.at(-1)?.role === 'user')) {
      const items = (w.wire as { input: Item[] }).input.map((i) => JSON.stringify(i));
      const forked = items.slice(0, items.length - 1);
      expect(sentInputs.some((sent) => forked.every((item, k) => sent[k] === item))).toBe(true);
    }
    const runs = writerStreams(rig, sid);
    expect(runs.every((r) => r.mode === 'fork' && r.outcome === 'success')).toBe(true);
    expect(runs.length).toBeGreaterThan(0);
    // The fork's first call reads the agent's cached prefix.
    expect(runs.every((r) => (r.cached[0] ?? 0) > 0)).toBe(true);

    // Codex's own compaction (marked in its turn metadata) is answered from the checkpoint, with no upstream call.
    const before = rig.tap.exchanges.length;
    const res = await fetch(`${rig.sessionURL(sid)}/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-resp-1', 'content-type': 'application/json', 'x-codex-turn-metadata': JSON.stringify({ request_kind: 'compaction' }) },
      body: JSON.stringify({ model: 'gpt-4o', input: [...agent.input, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'You are performing a CONTEXT CHECKPOINT COMPACTION.' }] }], tools: [], stream: true, store: false }),
    });
    const events = await res.text();
    expect(res.status).toBe(200);
    expect(rig.tap.exchanges.length).toBe(before);
    const completed = events.split('\n').find((l) => l.startsWith('data:') && l.includes('"response.completed"'));
    const summary = ((JSON.parse(completed?.slice(5) ?? '{}') as { response?: { output?: Item[] } }).response?.output?.[0]?.['content'] as Item[] | undefined)?.[0]?.['text'];
    expect(String(summary)).toMatch(/^## Checkpoint/);
    const requested = [...rig.log.read(`session/${sid}`)].filter((r) => r.type === 'rebuild.requested').map((r) => (r.payload as { reason: string }).reason);
    expect(requested.at(-1)).toBe('compaction');
    const announced = [...rig.log.read(`session/${sid}`)].some((r) => r.type === 'decision' && JSON.stringify(r.payload).includes("Answering the agent's compaction from the checkpoint"));
    expect(announced).toBe(true);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });

  it('Anthropic: one session despite the moving breakpoint, messages recorded without it, writers fork with at most four breakpoints, rewritten requests alternate', { timeout: 180_000 }, async () => {
    const sid = 'anth';
    const agent = new AnthropicAgent({ baseURL: rig.sessionURL(sid).replace(/\/v1$/, ''), apiKey: 'sk-anth-1', system: SYSTEM });
    const calls = (): Exchange[] => agentCalls(rig, '/messages');
    const rewrittenAt = (): number => calls().findIndex((e) => textOf((bodyOf(e)['messages'] as Item[])[0]).startsWith('## Checkpoint'));
    for (let turn = 0; turn < 40 && (rewrittenAt() < 0 || calls().length - rewrittenAt() < 4); turn++) await agent.turn(turn % 2 === 1);
    expect(rewrittenAt()).toBeGreaterThan(0);

    const opened = [...rig.log.read(`session/${sid}`)][0]?.payload as { setup: { api?: string; system: unknown; params?: Item } };
    expect(opened.setup.api).toBe('anthropic-messages');
    expect(opened.setup.system).toEqual(agent.system);
    expect(opened.setup.params).toMatchObject({ max_tokens: 4096 });
    expect([...rig.log.read(`session/${sid}-s1`)]).toEqual([]);

    await until(() => recordedMessages(rig.log, sid).length >= agent.messages.length - 1);
    const recorded = recordedMessages(rig.log, sid);
    expect(new Set(recorded.map((m) => m.id)).size).toBe(recorded.length);
    for (const m of recorded) expect(hasBreakpoint(m.native)).toBe(false);
    expect(recorded.some((m) => m.usage !== undefined && 'cache_read_input_tokens' in m.usage)).toBe(true);

    // Rewritten requests: roles alternate from a user turn, every tool result answers the assistant turn before it.
    for (const e of calls().slice(rewrittenAt())) {
      const messages = bodyOf(e)['messages'] as Item[];
      messages.forEach((m, i) => expect(m['role']).toBe(i % 2 === 0 ? 'user' : 'assistant'));
      expect(JSON.stringify(bodyOf(e)).split('"cache_control"').length - 1).toBeLessThanOrEqual(4);
    }

    const runs = writerStreams(rig, sid);
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.mode === 'fork' && r.outcome === 'success')).toBe(true);
    expect(runs.some((r) => r.cached.some((c) => c > 0))).toBe(true);
    for (const w of writerRuns(rig, 'anthropic-messages')) expect(JSON.stringify(w.wire).split('"cache_control"').length - 1).toBeLessThanOrEqual(4);

    // pi's own compaction (a summarisation prompt, no tools) is answered from the checkpoint too.
    const before = rig.tap.exchanges.length;
    const reply = await agent.sdk.messages.create({ model: 'claude-test', max_tokens: 1024, system: 'You are a context summarization assistant.', messages: agent.messages as never });
    expect(rig.tap.exchanges.length).toBe(before);
    expect(reply.content[0]?.type === 'text' ? reply.content[0].text : '').toMatch(/^## Checkpoint/);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });
});
