/**
 * The agents of the `gateway` section, in their own process (so their client-side timings share no event loop with
 * the gateway): coding conversations over `fetch`, sent through the gateway (`<origin>/s/<sid>/v1`) or straight to the
 * upstream, with the same bodies and headers. Commands from the parent, each answered by a message of the same type:
 *
 * - `latency { sessions, rounds, model, fileBytes, tools, firstFileBytes? }`: round after round, each session's next call is sent
 *   twice, once through the gateway and once directly (same body; which goes first alternates), streamed or not
 *   (alternating); the gateway's reply is echoed (it must equal the direct one). Answers every call's timings. A
 *   session keeps its conversation from one command to the next. Without `tools`, the gateway only relays the calls.
 * - `sequential { sessions, blocks, callsPerBlock, model, fileBytes }`: one session at a time, blocks of calls sent
 *   back to back (the next as soon as the reply is in, as an agent whose tools take no time), through the gateway
 *   and directly in turn (which block goes first alternates), each path on its own copy of the conversation;
 *   non-streamed. Answers every call's timings with its position in its block.
 * - `throughput { target, sessions, callsPerSession, concurrency, model, fileBytes, tools }`: `concurrency` lanes, each
 *   running its share of the sessions round-robin, one call in flight per lane; non-streamed. Each target (and each
 *   kind of call: with tools, or without them, which the gateway only relays) keeps its own copy of every
 *   conversation, so all see the same bodies when they run the same rounds.
 * - `fill-step { sid, model, fileBytes, usableWindow }`: the session's next call through the gateway unless it could
 *   reach the usable window (by the gateway's own estimate, with a margin), answered as `fill-step:<sid>` (so the
 *   parent can step several sessions at once) with `called: false` once the session is full. The parent sends the
 *   next step when it sees fit (once the daemon recorded the call and the session's writer settled).
 * - `overflow { sid, model, usableWindow, tag }`: the session's next call, padded to overflow the window, through the
 *   gateway, tagged `x-bench-call: <tag>` so the upstream keeps what it got.
 * - `direct { body, sid }`: one non-streamed call with `body` (what the upstream got for the session's overflowing
 *   call) straight to the upstream, with the session's headers. The loopback counts tokens once per distinct message
 *   and remembers the count, so sent again as it is, the messages that were new to it on the gateway's call (the
 *   rebuilt context, the padded message) would cost it nothing the second time; each of them gets one more space in
 *   its text, so it counts them again, as it did for the gateway's call.
 */
import { childConfig, runChild, sendToParent, type ChildMessage } from './bench-process.ts';
import { AgentConversation } from './agent-conversation.ts';
import { parseChatReply, timedChatCall, type TimedCall } from './timed-chat-call.ts';

export interface GatewayAgentConfig {
  /** The gateway's `http://host:port` (no `/v1`). */
  readonly gatewayOrigin: string;
  /** The upstream's base URL, `…/v1`. */
  readonly upstreamBaseURL: string;
}

export type CallPath = 'gateway' | 'direct';

/** One timed call of the `latency` command. */
export interface LatencySample {
  readonly round: number;
  readonly stream: boolean;
  readonly path: CallPath;
  readonly ttfb: number;
  readonly total: number;
  readonly bodyBytes: number;
}

/** One timed call of the `sequential` command. */
export interface SequentialSample {
  readonly path: CallPath;
  /** 0 for the first call of a block (the other path's block ran before it), then 1, 2, … */
  readonly position: number;
  readonly total: number;
}

export interface ThroughputResult {
  readonly requests: number;
  readonly seconds: number;
  /** Client-side total time per call, ms. */
  readonly p50: number;
}

export interface OverflowResult {
  readonly ttfb: number;
  readonly total: number;
  readonly bodyBytes: number;
  /** Usage the agent saw before the call and with its reply. */
  readonly usageBefore: number | null;
  readonly usageAfter: number | null;
}

/** A margin (tokens per new message) for the fields the gateway adds to a message before it estimates its size. */
const ENVELOPE_TOKENS = 100;

async function main(): Promise<void> {
  const config = childConfig<GatewayAgentConfig>();
  const conversations = new Map<string, AgentConversation>();
  const conversation = (key: string, name: string, fileBytes: number, firstFileBytes = fileBytes): AgentConversation => {
    let c = conversations.get(key);
    if (c === undefined) conversations.set(key, (c = new AgentConversation(name, fileBytes, firstFileBytes)));
    return c;
  };
  const headersOf = (sid: string): Record<string, string> => ({
    'content-type': 'application/json',
    authorization: 'Bearer sk-bench-agent',
    // One project per session: its writers share no MEMORY.md with other sessions' writers.
    'x-baton-project': `p-${sid}`,
  });
  const url = (path: CallPath, sid: string): string =>
    path === 'gateway' ? `${config.gatewayOrigin}/s/${sid}/v1/chat/completions` : `${config.upstreamBaseURL}/chat/completions`;

  async function latency(sessions: readonly string[], rounds: number, model: string, fileBytes: number, tools: boolean, firstFileBytes: number): Promise<LatencySample[]> {
    const samples: LatencySample[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const [s, sid] of sessions.entries()) {
        const c = conversation(`latency:${sid}`, sid, fileBytes, firstFileBytes);
        const stream = (round + s) % 2 === 1;
        const order: CallPath[] = ((round >> 1) + s) % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway'];
        const body = c.body(model, stream, tools);
        const calls = new Map<CallPath, TimedCall>();
        for (const path of order) {
          const call = await timedChatCall(url(path, sid), body, headersOf(sid));
          calls.set(path, call);
          samples.push({ round, stream, path, ttfb: call.ttfb, total: call.total, bodyBytes: body.length });
        }
        const viaGateway = parseChatReply(calls.get('gateway')?.text ?? '', stream);
        const direct = parseChatReply(calls.get('direct')?.text ?? '', stream);
        if (JSON.stringify(viaGateway) !== JSON.stringify(direct)) {
          throw new Error(`session ${sid}: the gateway's reply differs from the direct one: ${JSON.stringify(viaGateway)} vs ${JSON.stringify(direct)}`);
        }
        c.reply(viaGateway);
      }
    }
    return samples;
  }

  async function sequential(sessions: readonly string[], blocks: number, callsPerBlock: number, model: string, fileBytes: number): Promise<SequentialSample[]> {
    const samples: SequentialSample[] = [];
    for (const sid of sessions) {
      for (let block = 0; block < blocks; block++) {
        const order: CallPath[] = block % 2 === 0 ? ['gateway', 'direct'] : ['direct', 'gateway'];
        for (const path of order) {
          const c = conversation(`sequential-${path}:${sid}`, sid, fileBytes);
          for (let position = 0; position < callsPerBlock; position++) {
            const call = await timedChatCall(url(path, sid), c.body(model, false), headersOf(sid));
            samples.push({ path, position, total: call.total });
            c.reply(parseChatReply(call.text, false));
          }
        }
      }
    }
    return samples;
  }

  async function throughput(target: CallPath, sessions: readonly string[], callsPerSession: number, concurrency: number, model: string, fileBytes: number, tools: boolean): Promise<ThroughputResult> {
    const totals: number[] = [];
    const lanes = Array.from({ length: concurrency }, (_, lane) => sessions.filter((_, s) => s % concurrency === lane));
    const start = performance.now();
    await Promise.all(
      lanes.map(async (mine) => {
        for (let i = 0; i < callsPerSession; i++) {
          for (const sid of mine) {
            const c = conversation(`${target}${tools ? '' : '-relayed'}:${sid}`, sid, fileBytes);
            const call = await timedChatCall(url(target, sid), c.body(model, false, tools), headersOf(sid));
            totals.push(call.total);
            c.reply(parseChatReply(call.text, false));
          }
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    totals.sort((a, b) => a - b);
    return { requests: totals.length, seconds, p50: totals[totals.length >> 1] ?? Number.NaN };
  }

  /** The session's next call through the gateway, unless it could reach the usable window; whether it was made. */
  async function fillStep(sid: string, model: string, fileBytes: number, usableWindow: number): Promise<boolean> {
    const c = conversation(`overflow:${sid}`, sid, fileBytes);
    if (c.nextEstimate() + ENVELOPE_TOKENS * c.unsent >= usableWindow) return false;
    const call = await timedChatCall(url('gateway', sid), c.body(model, false), headersOf(sid));
    c.reply(parseChatReply(call.text, false));
    return true;
  }

  /** Per overflow session: the messages the upstream had been sent before its overflowing call (as JSON). */
  const sentBefore = new Map<string, Set<string>>();

  async function overflow(sid: string, model: string, usableWindow: number, tag: string): Promise<OverflowResult> {
    const c = conversations.get(`overflow:${sid}`);
    if (c === undefined) throw new Error(`no conversation ${sid}: fill it first`);
    sentBefore.set(sid, new Set(c.messages.slice(0, c.sentLength).map((m) => JSON.stringify(m))));
    const usageBefore = c.lastUsage;
    // Past the window by the gateway's own lower-bound estimate, so the gateway treats it as an overflow.
    c.padTo(usableWindow + 4 * ENVELOPE_TOKENS);
    const body = c.body(model, false);
    const call = await timedChatCall(url('gateway', sid), body, { ...headersOf(sid), 'x-bench-call': tag });
    const reply = parseChatReply(call.text, false);
    c.reply(reply);
    return { ttfb: call.ttfb, total: call.total, bodyBytes: body.length, usageBefore, usageAfter: reply.usage };
  }

  /** `body` with one more space in the text of every message the upstream had not been sent before `sid`'s overflow. */
  function keptNew(sid: string, body: string): { body: string; renewed: number } {
    const seen = sentBefore.get(sid);
    if (seen === undefined) throw new Error(`no overflowing call for ${sid}`);
    const parsed = JSON.parse(body) as { messages: Record<string, unknown>[] };
    let renewed = 0;
    parsed.messages = parsed.messages.map((m) => {
      if (seen.has(JSON.stringify(m)) || typeof m['content'] !== 'string') return m;
      renewed++;
      return { ...m, content: `${m['content']} ` };
    });
    return { body: JSON.stringify(parsed), renewed };
  }

  process.on('message', (m: ChildMessage) => {
    const n = (key: string): number => Number(m[key]);
    const s = (key: string): string => String(m[key]);
    const list = (key: string): string[] => m[key] as string[];
    const answer = async (result: Promise<Record<string, unknown>>): Promise<void> => {
      try {
        await sendToParent({ type: m.type, ...(await result) });
      } catch (err) {
        await sendToParent({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    };
    switch (m.type) {
      case 'latency':
        void answer(
          latency(list('sessions'), n('rounds'), s('model'), n('fileBytes'), m['tools'] !== false, m['firstFileBytes'] === undefined ? n('fileBytes') : n('firstFileBytes')).then((samples) => ({
            samples,
          })),
        );
        break;
      case 'sequential':
        void answer(sequential(list('sessions'), n('blocks'), n('callsPerBlock'), s('model'), n('fileBytes')).then((samples) => ({ samples })));
        break;
      case 'throughput':
        void answer(throughput(s('target') as CallPath, list('sessions'), n('callsPerSession'), n('concurrency'), s('model'), n('fileBytes'), m['tools'] !== false).then((r) => ({ ...r })));
        break;
      case 'fill-step':
        // Answered under a type of its own per session: the parent steps several sessions at once.
        fillStep(s('sid'), s('model'), n('fileBytes'), n('usableWindow')).then(
          (called) => sendToParent({ type: `fill-step:${s('sid')}`, called }),
          (err: unknown) => sendToParent({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
        );
        break;
      case 'overflow':
        void answer(overflow(s('sid'), s('model'), n('usableWindow'), s('tag')).then((r) => ({ ...r })));
        break;
      case 'direct':
        void answer(
          (async () => {
            const { body, renewed } = keptNew(s('sid'), s('body'));
            const { ttfb, total } = await timedChatCall(url('direct', s('sid')), body, headersOf(s('sid')));
            return { ttfb, total, renewed };
          })(),
        );
        break;
      case 'stop':
        process.exit(0);
        break;
      default:
        break;
    }
  });
  await sendToParent({ type: 'ready' });
  // Runs until the parent disconnects (runChild exits then).
  await new Promise<never>(() => {});
}

runChild(main);
