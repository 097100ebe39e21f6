import type { Message } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import type { RecordedRequest } from '@baton/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentResponder, bigFile, isWriterRequest, writerTaskIndex } from './support/gateway-agent.ts';
import { GATEWAY_TOOLS, recordTypes, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type SentMessage = Record<string, unknown> & { role: string; content?: unknown };

const KEY = 'sk-overflow-0000';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
const tools = GATEWAY_TOOLS as OpenAI.Chat.Completions.ChatCompletionTool[];

const contentOf = (m: { content?: unknown } | undefined): string => (typeof m?.content === 'string' ? m.content : '');

/** The JSON text of the `messages` array in a raw body, and where it ends. */
function messagesSpan(raw: string): { start: number; end: number } {
  const start = raw.indexOf('"messages":') + '"messages":'.length;
  const end = raw.indexOf(',"tools":', start);
  return { start, end };
}

// Once as one user of NATS, once with the gateway holding a project's credentials only (docs/operations.md's recipe):
// everything it does goes through that project's subjects and reply inboxes.
describe.each([
  { credentials: 'one NATS user', natsProject: undefined },
  { credentials: "the project's NATS user", natsProject: 'shop' as const },
])('gateway overflow rewrite (over a real nats-server, $credentials, writers in fork mode)', ({ natsProject }) => {
  let rig: GatewayRig;
  beforeAll(async () => {
    // A 37 036-token window: usable 37 036 − 4 629 (output, 12.5 %) − 7 407 (compaction, 20 %) = 25 000 tokens, and a ladder of
    // threshold writers at 5 000, 10 000 and 12 000.
    rig = await startGatewayRig({ nats: true, ...(natsProject !== undefined ? { natsProject } : {}), gateway: { contextWindows: { 'gpt-4o': 37_036 } } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('rewrites every request after an overflow onto the rebuilt context, twice, and writers fork from what was sent', { timeout: 180_000 }, async () => {
    const sid = 'overflow';
    const sdk = new OpenAI({ baseURL: rig.sessionURL(sid), apiKey: KEY, maxRetries: 0, timeout: 60_000 });
    const history: Msg[] = [{ role: 'system', content: SYSTEM }];
    /** Per agent call: the agent's history length, the upstream request it became, and the usage the agent saw. */
    const calls: { historyLength: number; request: RecordedRequest; sent: SentMessage[]; usage: number }[] = [];

    async function call(): Promise<OpenAI.Chat.Completions.ChatCompletionMessage> {
      const before = rig.model.requests.length;
      const res = await sdk.chat.completions.create({ model: 'gpt-4o', messages: history, tools });
      const request = rig.model.requests.slice(before).filter((r) => !isWriterRequest(r)).at(-1);
      if (request === undefined) throw new Error('the call did not reach the upstream');
      calls.push({ historyLength: history.length, request, sent: request.body.messages, usage: res.usage?.total_tokens ?? -1 });
      const message = res.choices[0]?.message;
      if (message === undefined) throw new Error('no choice');
      history.push(message.tool_calls !== undefined ? { role: 'assistant', content: message.content, tool_calls: message.tool_calls } : { role: 'assistant', content: message.content });
      return message;
    }

    const rewritten = (i: number): boolean => calls[i] !== undefined && calls[i].sent.length !== calls[i].historyLength;
    /** The rebuilt context's boundary message a call was sent with (null when it went as the agent's history). */
    const boundaryOf = (i: number): string | null => (rewritten(i) ? JSON.stringify(calls[i]?.sent[1]) : null);
    const rebuilds = (): number[] => calls.flatMap((_, i) => (boundaryOf(i) !== null && boundaryOf(i) !== boundaryOf(i - 1) ? [i] : []));
    let turn = 0;
    // Turns until the second rebuild, and one turn more.
    while (rebuilds().length < 2 || calls.length - (rebuilds()[1] ?? 0) < 3) {
      turn++;
      history.push({ role: 'user', content: `Please look at src/mod-${turn}.ts and fix the reducer.` });
      const message = await call();
      history.push({ role: 'tool', tool_call_id: message.tool_calls?.[0]?.id ?? 'missing', content: bigFile(turn) });
      await call();
      if (turn > 60) throw new Error(`no second overflow: usage ${calls.map((c) => c.usage).join(', ')}`);
    }
    const [r1 = -1, r2 = -1] = rebuilds();

    // Before the overflow every request went upstream as the agent's own history.
    for (let i = 0; i < r1; i++) expect(rewritten(i)).toBe(false);
    for (const [at, next] of [
      [r1, r2],
      [r2, calls.length],
    ] as const) {
      const first = calls[at];
      if (first === undefined) throw new Error('no rewrite');
      // The usage before it reached the usable window (the gateway adds its estimate of the new messages).
      expect((calls[at - 1]?.usage ?? 0) + 2_500).toBeGreaterThanOrEqual(25_000);
      // The rewritten request: system + the rebuilt context (its boundary message first), and nothing of Baton's envelope.
      expect(first.sent[0]).toEqual({ role: 'system', content: SYSTEM });
      expect(first.sent[1]?.role).toBe('user');
      expect(String(first.sent[1]?.content)).toMatch(/^## Checkpoint/);
      expect(first.sent.length).toBeLessThan(first.historyLength);
      for (const m of first.sent) for (const field of ['id', 'agent_id', 'usage', 'finish_reason', 'created_at']) expect(m).not.toHaveProperty(field);
      // What follows the newest assistant message (the tool output the model has not seen yet) goes verbatim after
      // the rebuilt context, not cleared like an old tool output.
      const asked = history.slice(0, first.historyLength);
      const unanswered = asked.slice(asked.map((m) => m.role).lastIndexOf('assistant') + 1);
      expect(unanswered.length).toBeGreaterThan(0);
      expect(first.sent.slice(-unanswered.length)).toEqual(unanswered);
      // The usage the agent sees is the rewritten request's: far below the usage that overflowed.
      expect(first.usage).toBeLessThan((calls[at - 1]?.usage ?? 0) / 2);
      // Every byte but the `messages` member is the agent's.
      const agentRaw = JSON.stringify({ model: 'gpt-4o', messages: history.slice(0, first.historyLength), tools });
      const firstRaw = first.request.rawBody;
      const span = messagesSpan(firstRaw);
      expect(firstRaw.slice(0, span.start)).toBe(agentRaw.slice(0, messagesSpan(agentRaw).start));
      expect(firstRaw.slice(span.end)).toBe(agentRaw.slice(messagesSpan(agentRaw).end));
      // Every later request until the next rebuild: the same prefix bytes, then the agent's messages since the overflow.
      const prefix = firstRaw.slice(0, span.end - 1);
      for (let i = at + 1; i < next; i++) {
        const later = calls[i];
        if (later === undefined) continue;
        expect(later.request.rawBody.startsWith(prefix)).toBe(true);
        expect(later.request.rawBody[prefix.length]).toBe(',');
        expect(later.sent.slice(first.sent.length)).toEqual(history.slice(first.historyLength, later.historyLength));
      }
    }
    // The second rebuild is on top of the first: a new boundary, and the first one is gone from what is sent.
    const firstBoundary = boundaryOf(r1);
    expect(boundaryOf(r2)).not.toBe(firstBoundary);
    expect(calls[r2]?.sent.some((m) => JSON.stringify(m) === firstBoundary)).toBe(false);
    expect(recordTypes(rig.log, sid).filter((t) => t === 'rebuild.rendered')).toHaveLength(2);

    // The writers run in fork mode, and each forks from bytes the upstream actually got: its messages before the
    // writer task are the start of one call's request as sent — after a rewrite, the rebuilt context, not the
    // agent's original history.
    const writerRuns = rig.model.requests.filter((r) => isWriterRequest(r) && writerTaskIndex(r) === r.body.messages.length - 1);
    const afterRewrite = writerRuns.filter((w) => w.index > (calls[r1]?.request.index ?? Infinity));
    expect(writerRuns.length).toBeGreaterThanOrEqual(2);
    expect(afterRewrite.length).toBeGreaterThanOrEqual(1);
    for (const writer of writerRuns) {
      const prefix = writer.body.messages.slice(0, writerTaskIndex(writer)).map((m) => JSON.stringify(m));
      const source = calls.find((c) => c.sent.length >= prefix.length && c.sent.slice(0, prefix.length).every((m, i) => JSON.stringify(m) === prefix[i]));
      expect(source, `writer request ${writer.index} forks from a request the upstream got`).toBeDefined();
      expect(writer.body.tools).toEqual(GATEWAY_TOOLS);
    }
    for (const writer of afterRewrite) {
      const prefix = writer.body.messages.slice(0, writerTaskIndex(writer));
      expect(JSON.stringify(prefix)).not.toContain('value_1_0 ');
      expect(contentOf(prefix[1])).toMatch(/^## Checkpoint/);
    }
    expect(JSON.stringify(history)).toContain('value_1_0 ');
    // The writers' first calls hit the provider's prefix cache (the fork shares the agent's prefix). Once they are done:
    // the last calls may have started one that has not had its reply yet.
    expect(await rig.daemon.sessions.waitWritersIdle(30_000)).toBe(true);
    const writerStreams = [...rig.log.streams('writer/')];
    for (const stream of writerStreams) {
      const records = [...rig.log.read(stream)];
      expect((records[0]?.payload as { input?: { mode?: string } }).input?.mode).toBe('fork');
      const replied = records.find((r) => r.type === 'model.replied')?.payload as { usage?: { cached: number } } | undefined;
      expect(replied?.usage?.cached).toBeGreaterThan(0);
    }

    // The daemon session: every message recorded once, nothing diverges on replay.
    // All but the system prompt and the last reply (recorded when the agent sends it back), once the last call is in.
    await until(() => recordedMessages(rig.log, sid).length === history.length - 2);
    const recorded = recordedMessages(rig.log, sid);
    expect(new Set(recorded.map((m: Message) => m.id)).size).toBe(recorded.length);
    expect(verifySession(rig.log, sid).divergence).toBeNull();
  });
});

describe('gateway: a model whose window is smaller than the reserves', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    // 8 000 tokens: less than the output and compaction reserves, so the daemon reports a usable window of 0.
    rig = await startGatewayRig({ gateway: { contextWindows: { m: 8_000 } } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('forwards and records the conversation without asking for a rebuild on every call', async () => {
    const sid = 'no-window';
    const sdk = new OpenAI({ baseURL: rig.sessionURL(sid), apiKey: KEY, maxRetries: 0 });
    const history: Msg[] = [{ role: 'system', content: SYSTEM }];
    let sentLength = 0;
    for (let turn = 1; turn <= 3; turn++) {
      history.push({ role: 'user', content: `Please look at src/mod-${turn}.ts and fix the reducer.` });
      sentLength = history.length;
      const res = await sdk.chat.completions.create({ model: 'm', messages: history, tools });
      const message = res.choices[0]?.message;
      history.push({ role: 'assistant', content: message?.content ?? null, ...(message?.tool_calls !== undefined ? { tool_calls: message.tool_calls } : {}) });
      if (message?.tool_calls !== undefined) history.push({ role: 'tool', tool_call_id: message.tool_calls[0]?.id ?? '', content: 'export const x = 1;' });
    }
    await until(() => recordedMessages(rig.log, sid).length === sentLength - 1);
    expect(rig.model.requests.every((r) => !isWriterRequest(r))).toBe(true);
    expect(rig.model.requests.map((r) => r.body.messages.length)).toEqual([2, 5, 8]);
    expect(recordTypes(rig.log, sid).filter((t) => t.startsWith('rebuild.'))).toEqual([]);
  });
});

describe("gateway holding one project's NATS credentials", () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig({ nats: true, natsProject: 'shop', gatewayLogger: (level, msg, data) => warnings.push({ level, msg, data }) });
    rig.model.setResponder(agentResponder);
  });
  const warnings: { level: string; msg: string; data?: Record<string, unknown> | undefined }[] = [];
  afterAll(async () => {
    await rig.stop();
  });

  it("records its own project's sessions; a request naming another project goes through unrecorded, NATS refusing the gateway that project", async () => {
    const ask = (sid: string, headers: Record<string, string> = {}): Promise<unknown> =>
      new OpenAI({ baseURL: rig.sessionURL(sid), apiKey: KEY, maxRetries: 0, defaultHeaders: headers }).chat.completions.create({
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'Please look at src/mod-1.ts and fix the reducer.' },
        ],
        tools,
      });
    await ask('own');
    // Recorded in the background once the reply is complete; the limit is a hang net for a loaded machine.
    await until(() => recordedMessages(rig.log, 'own').length > 0, 60_000).catch((err: unknown) => {
      throw new Error(`own call not recorded; gateway said: ${JSON.stringify(warnings)}`, { cause: err });
    });
    const opened = [...rig.log.read('session/own')].find((r) => r.type === 'session.opened')?.payload as { setup: { projectId: string } };
    expect(opened.setup.projectId).toBe('shop');
    // The agent still gets its answer; the gateway could not open the session (NATS refused it the other project's
    // subjects) and says so; the daemon never saw it.
    expect(await ask('foreign', { 'x-baton-project': 'billing' })).toMatchObject({ choices: [expect.anything()] });
    const refused = warnings.find((w) => w.msg === 'forwarding without recording' && w.data?.['session'] === 'foreign');
    expect(String(refused?.data?.['error'])).toMatch(/permission/i);
    expect([...rig.log.read('session/foreign')]).toEqual([]);
  });
});
