import { hash } from 'node:crypto';
import type { Message } from '@baton/protocol';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkAgent, agentResponder } from './support/gateway-agent.ts';
import { recordedMessages, startGatewayRig, until, type GatewayRig } from './support/gateway-rig.ts';

const KEY = 'sk-parsed-prefix-0000000';
const SYSTEM = 'You are a careful coding agent working in a TypeScript repository.';
const MODEL = 'gpt-4.1';

type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** A long build log (400 KB), with quotes, backslashes and multi-byte characters. */
function buildLog(): string {
  const lines: string[] = [];
  for (let j = 0, size = 0; size < 400_000; j++) {
    const line = `[${j}] tsc: src/mod-${j % 50}.ts(${j}): error TS2322: "Type 'Refund' is not assignable" — C:\\repo\\src ✗`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** `text` with the character at `at` changed (same length). */
const oneByteOff = (text: string, at: number): string => `${text.slice(0, at)}${text[at] === 'x' ? 'y' : 'x'}${text.slice(at + 1)}`;

/**
 * What the daemon recorded of a chat history, in the shape the agent sent it (role, content, tool call ids), as a
 * digest: a failure does not print the large log.
 */
const shape = (m: Message | Msg): string => `${m.role} ${hash('sha256', JSON.stringify([m.role, m.content ?? null, (m as { tool_call_id?: string }).tool_call_id ?? null]))}`;

describe('gateway: a large history is parsed from where the call before it ended, and recorded exactly', () => {
  let rig: GatewayRig;
  beforeAll(async () => {
    rig = await startGatewayRig({ gateway: { contextWindows: { [MODEL]: 10_000_000 } } });
    rig.model.setResponder(agentResponder);
  });
  afterAll(async () => {
    await rig.stop();
  });

  it('parses only the new part of each body after a large tool output; a one-byte edit of a message already sent, in the large output or in a small one, is read and recorded as a new history', { timeout: 120_000 }, async () => {
    const sid = 'large-log';
    const agent = new SdkAgent({ baseURL: rig.sessionURL(sid), apiKey: KEY, system: SYSTEM, model: MODEL });
    const recorded = (id: string): string[] => recordedMessages(rig.log, id).map(shape);
    const sent = (): string[] => agent.history.slice(1, agent.sentLength).map(shape);

    agent.history.push({ role: 'user', content: 'Read the build log and fix the type errors.' });
    const { message } = await agent.call();
    const log = buildLog();
    agent.history.push({ role: 'tool', tool_call_id: message.tool_calls?.[0]?.id ?? 'call-0', content: log });
    await agent.call();
    await until(() => recorded(sid).length === 3, 60_000);
    const beforeEdit = sent();
    expect(recorded(sid)).toEqual(beforeEdit);
    expect(rig.gateway.bodiesParsed).toEqual({ whole: 1, newPart: 0 });

    // The agent's copy of the log changes by one character (same length) before its next call: the bytes the gateway
    // read before are not the ones it gets, so the body is read whole, and the session sees a new history (the log is
    // one of the messages it compares), recorded with the log as it is now.
    const edited = oneByteOff(log, 200_000);
    agent.history[3] = { ...(agent.history[3] as Msg & { role: 'tool' }), content: edited };
    await agent.turn();
    await until(() => recorded(`${sid}-s1`).length === agent.sentLength - 1, 60_000);
    expect(recorded(`${sid}-s1`)).toEqual(sent());
    expect(recordedMessages(rig.log, `${sid}-s1`)[2]?.content === edited).toBe(true);
    expect(recorded(sid)).toEqual(beforeEdit);
    expect(rig.gateway.bodiesParsed).toEqual({ whole: 2, newPart: 1 });

    // Turns that only add messages: each body is parsed from where the one before it ended.
    await agent.turn();
    await agent.turn();
    await until(() => recorded(`${sid}-s1`).length === agent.sentLength - 1, 60_000);
    expect(recorded(`${sid}-s1`)).toEqual(sent());
    expect(rig.gateway.bodiesParsed).toEqual({ whole: 2, newPart: 5 });

    // One byte of the first, small, message: read whole again, and another new history.
    const first = agent.history[1] as Msg & { content: string };
    agent.history[1] = { ...first, content: oneByteOff(first.content, 5) };
    await agent.turn();
    await until(() => recorded(`${sid}-s2`).length === agent.sentLength - 1, 60_000);
    expect(recorded(`${sid}-s2`)).toEqual(sent());
    expect(rig.gateway.bodiesParsed).toEqual({ whole: 3, newPart: 6 });
  });
});
