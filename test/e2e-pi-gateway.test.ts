import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublishedEvent } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import type { RecordedRequest } from '@baton/testing';
import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayRig, type GatewayRig } from './support/gateway-rig.ts';
import { contextTokens, piAnswers, piBaseUrl, piEvents, preparePi, runPi } from './support/pi-agent.ts';
import { callId, EDITED_REPORT, keyOf, piModelPlayer, PROMPTS, SCRIPT, SOURCES, START, STOP_REASONS } from './support/pi-task.ts';
import { sessionFacts, writerFacts, writersIdle } from './support/session-facts.ts';

/**
 * pi (`@mariozechner/pi-coding-agent`, an agent nobody here wrote) runs headless through the gateway in the chat API
 * against the loopback model, which plays pi's model over a scripted multi-turn task on a scratch project and answers
 * the daemon's checkpoint writers with the extractive writer. The conversation crosses the thresholds (fork-mode
 * writers) and then the usable window (a rebuild, and pi's later requests rewritten upstream), while pi's own
 * compaction stays off. (test/e2e-pi-native-gateway.test.ts runs the same task in pi's Responses and Anthropic APIs.)
 */

const SESSION = 'pi-e2e';
const MODEL_ID = 'pi-loop';
/** Gateway context window for pi's model: usable window 41 479 − 5 184 (output, 12.5 %) − 8 295 (compaction, 20 %) = 28 000, rungs 5 600 / 11 200 / 15 000. */
const CONTEXT_WINDOW = 41_479;
const USABLE_WINDOW = 28_000;
/** pi's own view of the window: its compaction would fire at 40 000 − 16 384 = 23 616 reported tokens if it were on. */
const PI_CONTEXT_WINDOW = 40_000;
const PI_KEY = 'sk-pi-e2e';
const DAEMON_KEY = 'sk-baton-daemon';

/*
 * Reported usage after each of the script's answers (about): 4.6k, 6.7k (rung 5 600), 6.7k, 10k, 12k (rung 11 200),
 * then 16.3k (rung 15 000), 16.4k, 16.5k, 20.6k; the request after step 8 carries about 9.5k tokens of `cat` output
 * and passes the usable window (28 000): rebuilt, the `cat` output going verbatim after the rebuilt context. After the
 * rebuild about 16.5k (the ladder again: 5 600, 11 200 and 15 000 at once, one writer and one queued), 16.6k, 19.7k,
 * 26.9k; the request after step 12 passes the window again: rebuilt on top of the first, then about 9k (5 600), 12.4k
 * (11 200, queued behind the running writer), 12.8k.
 */

interface WireMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_call_id?: string;
}
interface WireBody {
  readonly model: string;
  readonly messages: readonly WireMessage[];
  readonly tools?: readonly unknown[];
}

const bodyOf = (r: RecordedRequest): WireBody => JSON.parse(r.rawBody) as WireBody;
const textOf = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content ?? null));

/** The text of a user message as pi sends it: a string, or text parts. */
function userText(m: WireMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return (m.content as { type?: string; text?: string }[]).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
  return '';
}

describe('pi through the gateway', () => {
  let rig: GatewayRig;
  let scratch: string;
  const gatewayWarnings: string[] = [];

  beforeAll(async () => {
    rig = await startGatewayRig({
      nats: true,
      writerKey: DAEMON_KEY,
      gateway: { contextWindows: { [MODEL_ID]: CONTEXT_WINDOW } },
      gatewayLogger: (level, msg, data) => {
        if (level === 'warn' || level === 'error') gatewayWarnings.push(`${level}: ${msg} ${JSON.stringify(data ?? {})}`);
      },
    });
    scratch = await mkdtemp(join(tmpdir(), 'baton-pi-scratch-'));
  });

  afterAll(async () => {
    await rig?.stop();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('pi finishes a long task through the gateway: fork-mode writers, a rebuild on overflow, no compaction of its own', { timeout: 120_000 }, async () => {
    // The loopback model: the daemon's writers (their own key) get the extractive writer; pi (its key) gets its script.
    const player = piModelPlayer({ writerKey: DAEMON_KEY, writersIdle: () => writersIdle(rig.client, SESSION) });
    rig.model.setResponder((request) => player.respond(request));
    // pi's configuration: one provider whose base URL is the gateway with a fixed session id, its compaction off.
    const dirs = await preparePi(scratch, {
      api: 'openai-completions',
      baseUrl: piBaseUrl(rig.gateway.baseURL, SESSION, 'openai-completions'),
      apiKey: PI_KEY,
      compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
      model: { id: MODEL_ID, contextWindow: PI_CONTEXT_WINDOW, maxTokens: 4096, reasoning: false },
    });

    const events: PublishedEvent[] = [];
    const stream = rig.client.events(SESSION);
    const collecting = (async () => {
      for await (const e of stream) events.push(e);
    })();

    const pi = await runPi({ dirs, model: MODEL_ID, prompts: PROMPTS, timeoutS: 90 });
    expect(pi.stderr).toBe('');
    expect(pi.code).toBe(0);

    // pi did its task: every step of the script was asked for once, in order, and the files are on disk.
    expect(player.steps).toEqual(SCRIPT.map((_, i) => i));
    expect(await readFile(join(dirs.project, 'src/report.ts'), 'utf8')).toBe(EDITED_REPORT);
    expect(await readFile(join(dirs.project, 'src/index.ts'), 'utf8')).toBe(SOURCES.index);
    const output = piEvents(pi.stdout);
    expect(output.filter((e) => e.type === 'agent_end')).toHaveLength(PROMPTS.length);
    const answers = piAnswers(output);
    expect(answers.map((m) => m.stopReason)).toEqual(STOP_REASONS);
    // pi never compacted: no compaction event in its output, and no call without tools (its summarisation call) or with
    // its summarisation prompt reached the model. (With its compaction on it would have: its usage passed 40 000 − 16 384.)
    expect(output.filter((e) => e.type.startsWith('compaction') || e.type.startsWith('auto_retry'))).toEqual([]);
    const piRequests = rig.model.requests.filter((r) => keyOf(r) === PI_KEY);
    expect(piRequests).toHaveLength(SCRIPT.length);
    for (const r of piRequests) {
      expect(bodyOf(r).tools).toHaveLength(4);
      expect(r.rawBody).not.toContain('context summarization assistant');
    }
    // The usage pi was told is that of what the model got: never above the usable window.
    const contextOf = (i: number): number => contextTokens(answers[i]);
    expect(Math.max(...answers.map(contextTokens))).toBeLessThan(USABLE_WINDOW);

    // The session's writers settle before its log is read.
    await writersIdle(rig.client, SESSION);
    await rig.daemon.sessions.flushDecisions();
    stream.stop();
    await collecting;
    expect(gatewayWarnings).toEqual([]);
    // pi's history only grew: one daemon session, no new slice.
    expect([...rig.log.read(`session/${SESSION}-s1`)]).toEqual([]);

    const facts = sessionFacts(rig.log, SESSION);
    // Thresholds: the three rungs before the first rebuild, the re-armed ladder after it, and its first rungs again
    // after the second (how far that ladder gets depends on how much of the fitted context the provider counts).
    expect(facts.thresholds.slice(0, 7)).toEqual([5_600, 11_200, 15_000, 5_600, 11_200, 15_000, 5_600]);
    expect(facts.thresholds.slice(7).every((t) => t === 11_200 || t === 15_000)).toBe(true);
    // Every writer forks pi's request; a rung that fires while the writer of the one before still runs queues
    // (`pending`). A fitted rebuild's catch-up writer is not needed: the re-armed ladder's first rung starts one with
    // the next append, which covers the rebuild's boundary as well.
    expect(facts.writersStarted.slice(0, 4)).toEqual([
      ['fork', 'threshold'],
      ['fork', 'threshold'],
      ['fork', 'threshold'],
      ['fork', 'threshold'],
    ]);
    for (const [mode, trigger] of facts.writersStarted) expect([mode, ['threshold', 'pending'].includes(String(trigger))]).toEqual(['fork', true]);
    const { settled } = facts;
    expect(settled.map((s) => s.outcome)).toEqual(facts.writersStarted.map(() => 'success'));
    // Two rebuilds, on overflow, each rendered from a checkpoint.
    expect(facts.rebuildReasons).toEqual(['overflow', 'overflow']);
    expect(facts.rebuildOutcomes).toEqual(['rebuilt', 'rebuilt']);
    const rendered = facts.inputs.find((r) => r.type === 'rebuild.rendered')?.payload as { ok: boolean; tailIds: string[] } | undefined;
    expect(rendered?.ok).toBe(true);
    const tailLength = rendered?.tailIds.length ?? 0;
    expect(tailLength).toBeGreaterThan(0);

    // pi's requests as the model got them: its own bytes up to the overflow, then its system prompt, the rebuilt context
    // (boundary and tail) and whatever pi added since, every later request extending the one before.
    const bodies = piRequests.map(bodyOf);
    const system = JSON.stringify(bodies[0]?.messages[0]);
    const firstPrompt = JSON.stringify(bodies[0]?.messages[1]);
    const rewrittenFrom = bodies.findIndex((b) => JSON.stringify(b.messages[1]) !== firstPrompt);
    expect(rewrittenFrom).toBe(9);
    // The second rewrite: a new boundary message.
    const secondRewrite = bodies.findIndex((b, i) => i > rewrittenFrom && JSON.stringify(b.messages[1]) !== JSON.stringify(bodies[rewrittenFrom]?.messages[1]));
    expect(secondRewrite).toBeGreaterThan(rewrittenFrom + 2);
    for (let i = 1; i < bodies.length; i++) {
      const before = bodies[i - 1]?.messages ?? [];
      const now = bodies[i]?.messages ?? [];
      expect(JSON.stringify(now[0])).toBe(system);
      // Append-only, except at the rewrite: there the history before pi's newest messages gave way to the rebuilt context.
      if (i !== rewrittenFrom && i !== secondRewrite) expect(JSON.stringify(now.slice(0, before.length))).toBe(JSON.stringify(before));
      // Its newest message: the prompt that starts a turn, else the result of the call before.
      const prompt = START.findIndex((s) => s === i);
      const newest = now.at(-1);
      if (prompt >= 0) expect(newest?.role === 'user' ? userText(newest) : null).toBe(PROMPTS[prompt]);
      else expect(newest?.tool_call_id).toBe(callId(i - 1));
    }
    const rewritten = bodies[rewrittenFrom];
    if (rewritten === undefined) throw new Error('no request was rewritten');
    // System, boundary and the preserved tail, which ends with the `cat` output pi had just got, verbatim (the model had
    // not seen it: a rebuild never clears it).
    expect(rewritten.messages).toHaveLength(2 + tailLength);
    const fresh = rewritten.messages.at(-1);
    expect(fresh?.tool_call_id).toBe(callId(8));
    expect(textOf(fresh?.content)).toContain("export const MODULE = 'report';");
    expect(textOf(fresh?.content)).not.toContain('content cleared');
    const boundaryText = textOf(rewritten.messages[1]?.content);
    expect(rewritten.messages[1]?.role).toBe('user');
    expect(boundaryText).toContain('## Session checkpoint');
    expect(boundaryText).toContain('## Recent user input (verbatim)');
    expect(piRequests[rewrittenFrom]?.rawBody).not.toContain(callId(0));
    // pi saw the usage of what was sent: its context fell at the rewrite.
    expect(contextOf(rewrittenFrom)).toBeLessThan(contextOf(rewrittenFrom - 1));
    expect(contextOf(secondRewrite)).toBeLessThan(contextOf(secondRewrite - 1) / 2);
    // Every user message pi sent survives every rewritten request (in the rebuilt context or after it).
    for (let i = rewrittenFrom; i < piRequests.length; i++) {
      const sent = PROMPTS.filter((_, p) => (START[p] as number) <= i);
      for (const prompt of sent) expect(piRequests[i]?.rawBody).toContain(JSON.stringify(prompt).slice(1, -1));
    }

    // Every writer forked from the bytes the model got from pi: its first request starts with exactly the messages
    // (and tools) of the pi request it forked from, so the model's prefix cache serves all of that prefix.
    const sources: number[] = [];
    for (const { writerId } of settled) {
      const writer = writerFacts(rig.log, writerId);
      expect(writer.mode).toBe('fork');
      const k = writer.prefixMessages;
      const first = rig.model.requests.find((r) => keyOf(r) === DAEMON_KEY && r.rawBody.includes(`/staging/${writerId}/`));
      if (first === undefined) throw new Error(`writer ${writerId} made no model request`);
      const forked = bodyOf(first);
      const boundary = JSON.stringify(forked.messages[k - 1]);
      const source = piRequests.find((r) => JSON.stringify(bodyOf(r).messages[k - 1]) === boundary);
      if (source === undefined) throw new Error(`no pi request holds writer ${writerId}'s boundary at ${k - 1}`);
      sources.push(piRequests.indexOf(source));
      const prefix = JSON.stringify(bodyOf(source).messages.slice(0, k)).slice(0, -1);
      expect(source.rawBody).toContain(`"messages":${prefix}`);
      expect(first.rawBody).toContain(`"messages":${prefix}`);
      expect(JSON.stringify(forked.tools)).toBe(JSON.stringify(bodyOf(source).tools));
      expect(forked.model).toBe(MODEL_ID);
      expect(forked.messages.length).toBeGreaterThan(k);
      // The loopback's prefix cache works message by message (model + tools, then each message): the fork's first call
      // is credited with its whole prefix, rounded down to 128-token blocks.
      const pieces = [JSON.stringify({ model: forked.model, tools: forked.tools ?? [] }), ...forked.messages.slice(0, k).map((m) => JSON.stringify(m))];
      const prefixTokens = pieces.reduce((sum, piece) => sum + countTokens(piece, { disallowedSpecial: new Set<string>() }), 0);
      expect(writer.usage[0]?.cached).toBe(Math.floor(prefixTokens / 128) * 128);
      expect(writer.usage[0]?.prompt).toBeGreaterThan(prefixTokens);
      const perf = events.find((e) => e.type === 'writer.cache_perf' && e.writer_id === writerId);
      expect(perf).toMatchObject({ status: 'completed', num_llm_calls: 3 });
      expect(perf?.type === 'writer.cache_perf' ? perf.cache_hit_rate : 0).toBeGreaterThan(0.6);
    }
    // The writers after the rebuild forked from the rewritten bytes (system + rebuilt context + pi's later messages).
    expect(sources.map((i) => i >= rewrittenFrom)).toEqual(sources.map((_, k) => k >= 3));

    const verified = verifySession(rig.log, SESSION);
    expect(verified.divergence).toBeNull();
    expect(verified.writers).toBe(settled.length);
  });
});
