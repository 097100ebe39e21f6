import { BatonGateway } from '@baton/gateway';
import { readTimeline, verifySession } from '@baton/runtime';
import type { RecordedRequest, ScriptStep } from '@baton/testing';
import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewrittenRequests } from '../packages/cli/src/format/rewritten-requests.ts';
import { timelineHeader, timelineLine } from '../packages/cli/src/format/timeline-format.ts';
import { SdkAgent, agentResponder, isWriterRequest } from './support/gateway-agent.ts';
import { recordTypes, recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
/** usable 37 036 − 4 629 − 7 407 = 25 000 tokens; the model itself takes 30 000. */
const WINDOWS = { 'gpt-4o': 37_036 };
const MODEL_LIMIT = 30_000;

/** The agent's model, which refuses a prompt over its limit the way OpenAI does (and one call for another reason). */
function limitedModel(req: RecordedRequest): ScriptStep {
  if (req.body.messages.at(-1)?.content === 'refuse this') return { error: { status: 400, code: 'invalid_value', message: "Invalid value for 'tool_choice'." } };
  if (!isWriterRequest(req) && countTokens(req.rawBody, { disallowedSpecial: new Set<string>() }) > MODEL_LIMIT) {
    return { error: { status: 400, code: 'context_length_exceeded', message: `This model's maximum context length is ${MODEL_LIMIT} tokens. Please reduce the length of the messages.` } };
  }
  return agentResponder(req);
}

const isRewritten = (body: Buffer): boolean => body.toString('utf8').includes('## Checkpoint');
/** Whether a call through the tap is a checkpoint writer's (the daemon's), not the agent's. */
const isWriterCall = (e: { body: Buffer }): boolean => isWriterRequest({ body: JSON.parse(e.body.toString('utf8')) as RecordedRequest['body'] } as RecordedRequest);

/**
 * A gateway that restarts forgets which part of a conversation it had replaced: the agent's next call goes upstream
 * in full and the provider refuses it as too long. The gateway answers that refusal with a rebuild and sends the call
 * again rewritten, so the agent never sees the error, and the calls after it keep the new prefix.
 */
describe('gateway: the provider says the prompt is too long', () => {
  let rig: GatewayRig;
  let second: BatonGateway | null = null;
  beforeAll(async () => {
    rig = await startGatewayRig({ gateway: { contextWindows: WINDOWS } });
    rig.model.setResponder(limitedModel);
  });
  afterAll(async () => {
    await second?.close();
    await rig.stop();
  });

  it('rebuilds and sends the call again after a gateway restart lost the rewrite', { timeout: 120_000 }, async () => {
    const sid = 'restarted';
    const agent = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: 'sk-restart-0001', system: SYSTEM });
    // Turns until the gateway has rewritten a call onto a rebuilt context, and one turn more.
    let rewrittenAt = -1;
    for (let turn = 0; turn < 40 && (rewrittenAt < 0 || rig.tap.exchanges.length - rewrittenAt < 4); turn++) {
      await agent.turn();
      if (rewrittenAt < 0) rewrittenAt = rig.tap.exchanges.findIndex((e) => !isWriterCall(e) && isRewritten(e.body));
    }
    expect(rewrittenAt).toBeGreaterThan(0);
    const agentCalls = (): typeof rig.tap.exchanges => rig.tap.exchanges.filter((e) => !isWriterCall(e));
    expect(agentCalls().every((e) => e.status === 200)).toBe(true);
    const rebuildsBefore = recordTypes(rig.log, sid).filter((t) => t === 'rebuild.rendered').length;

    // The gateway restarts (same daemon, same upstream); the agent carries on with its whole history.
    await rig.gateway.close();
    second = await BatonGateway.start({ upstream: rig.tap.url, client: rig.client, contextWindows: WINDOWS, ownerSecret: rig.ownerSecret });
    const restarted = new SdkAgent({ baseURL: second.baseURL.replace(/\/v1$/, `/s/${sid}/v1`), apiKey: 'sk-restart-0001', system: SYSTEM });
    restarted.history.splice(0, restarted.history.length, ...agent.history);
    const before = agentCalls().length;
    await restarted.turn();
    await restarted.turn();

    const after = agentCalls().slice(before);
    // The first call went in full and was refused as too long; the gateway sent it again, rewritten, and the agent got
    // the answer to that (the SDK, with retries off, would have thrown on the 400).
    expect(after[0]?.status).toBe(400);
    expect(isRewritten(after[0]?.body ?? Buffer.alloc(0))).toBe(false);
    expect(after[1]?.status).toBe(200);
    expect(isRewritten(after[1]?.body ?? Buffer.alloc(0))).toBe(true);
    expect(after[1]?.body.length).toBeLessThan((after[0]?.body.length ?? 0) / 2);
    // Every later call keeps the new prefix: the rewritten call's messages, then what the agent added since.
    const prefix = (after[1]?.body.toString('utf8') ?? '').replace(/\],"tools":.*$/s, '');
    for (const e of after.slice(2)) {
      expect(e.status).toBe(200);
      expect(e.body.toString('utf8').startsWith(prefix)).toBe(true);
    }
    expect(recordTypes(rig.log, sid).filter((t) => t === 'rebuild.rendered').length).toBe(rebuildsBefore + 1);

    // The daemon session recorded each message once, through both gateways, and replays without divergence.
    await until(() => recordedMessages(rig.log, sid).length === restarted.history.length - 2);
    const recorded = recordedMessages(rig.log, sid);
    expect(new Set(recorded.map((m) => m.id)).size).toBe(recorded.length);
    expect(verifySession(rig.log, sid).divergence).toBeNull();

    // `baton replay` shows which calls went upstream rewritten: every call recorded after the first rebuild, on the
    // rebuild it was sent on (the calls before the first one went as the agent sent them).
    const timeline = readTimeline(rig.log, sid);
    const rewritten = rewrittenRequests(timeline);
    const appends = timeline.entries.filter((e) => e.writerId === null && e.type === 'messages.appended');
    const rendered = timeline.entries.filter((e) => e.writerId === null && e.type === 'rebuild.rendered').map((e) => e.seq);
    expect(rendered).toHaveLength(rebuildsBefore + 1);
    for (const e of appends) {
      const onto = rendered.filter((seq) => seq < e.seq).length;
      expect(rewritten.get(e.seq)).toBe(onto === 0 ? undefined : onto);
    }
    expect(rewritten.size).toBeGreaterThan(0);
    expect(rewritten.size).toBeLessThan(appends.length);
    expect(timelineHeader(timeline).join('\n')).toContain(`recorded by the gateway: ${appends.length} calls, ${rewritten.size} sent upstream rewritten onto ${rendered.length} rebuilt contexts`);
    const marked = timeline.entries.map((e) => timelineLine(e, timeline, rewritten)).filter((line) => line.includes('sent rewritten onto rebuilt context'));
    expect(marked).toHaveLength(rewritten.size);
  });

  it('relays a bad request that is not about the context as it came', async () => {
    const sid = 'plain-400';
    const res = await fetch(`${second?.baseURL.replace(/\/v1$/, `/s/${sid}/v1`)}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-plain' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'refuse this' }], tools: [{ type: 'function', function: { name: 'f' } }] }),
    });
    const exchange = rig.tap.exchanges.at(-1);
    expect(res.status).toBe(400);
    expect(exchange?.status).toBe(400);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.concat(exchange?.chunks ?? []));
    expect(recordTypes(rig.log, sid).filter((t) => t.startsWith('rebuild.'))).toEqual([]);
  });
});
