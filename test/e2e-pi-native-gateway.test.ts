import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublishedEvent } from '@baton/protocol';
import { verifySession } from '@baton/runtime';
import type { RecordedRequest } from '@baton/testing';
import { countTokens } from 'gpt-tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextTokens, piAnswers, piBaseUrl, piEvents, preparePi, runPi } from './support/pi-agent.ts';
import { callId, EDITED_REPORT, keyOf, piModelPlayer, PROMPTS, SCRIPT, SOURCES, START, STOP_REASONS } from './support/pi-task.ts';
import { sessionFacts, writerFacts, writersIdle } from './support/session-facts.ts';
import { startGatewayRig, type GatewayRig } from './support/gateway-rig.ts';

/**
 * pi runs headless through the gateway in its own provider APIs — OpenAI Responses and Anthropic Messages — against
 * the loopback model, which plays pi's model over the scripted warehouse task and answers the daemon's checkpoint
 * writers (their own key, in the session's API) with the extractive writer. The conversation crosses the thresholds
 * (fork-mode writers whose prefix is pi's own request) and then the usable window (a rebuild, and pi's later requests
 * rewritten upstream in its API), while pi's own compaction stays off.
 */

type Item = Record<string, unknown>;

const MODEL_ID = 'pi-loop';
/** Gateway context window for pi's model: usable window 41 479 − 5 184 (output, 12.5 %) − 8 295 (compaction, 20 %) = 28 000, rungs 5 600 / 11 200 / 15 000. */
const CONTEXT_WINDOW = 41_479;
const USABLE_WINDOW = 28_000;
/** pi's own view of the window: its compaction would fire at 40 000 − 16 384 = 23 616 reported tokens if it were on. */
const PI_CONTEXT_WINDOW = 40_000;
const PI_KEY = 'sk-pi-e2e';
const DAEMON_KEY = 'sk-baton-daemon';

/** A value as JSON without its `cache_control` markers (which Anthropic agents move every turn). */
const bare = (value: unknown): string => JSON.stringify(value, (key, v: unknown) => (key === 'cache_control' ? undefined : v));
const markers = (value: unknown): number => JSON.stringify(value).split('"cache_control"').length - 1;
const tokens = (text: string): number => countTokens(text, { disallowedSpecial: new Set<string>() });
const blocksOf = (m: Item | undefined): Item[] => (Array.isArray(m?.['content']) ? (m['content'] as Item[]) : typeof m?.['content'] === 'string' ? [{ type: 'text', text: m['content'] }] : []);

/** What differs between the two APIs, and what the run is expected to show in each. */
interface ApiCase {
  readonly api: 'openai-responses' | 'anthropic-messages';
  readonly session: string;
  /** The request's conversation list as sent: Responses `input` (pi's system item first), Anthropic `messages`. */
  list(r: RecordedRequest): Item[];
  /** How many leading items of the list are pi's system prompt (Responses: its developer item; Anthropic: none, `system` is a field). */
  readonly systemItems: number;
  /**
   * The loopback's simulated cache credit for a fork whose first call starts with `prefix` (items of the list) of the
   * pi request `source`: Responses caches by prefix (model, tools, then item by item, in 128-token blocks); Anthropic
   * reads the tools, the system blocks and the message blocks up to the breakpoint pi put on its newest user turn.
   */
  cachedPrefix(source: RecordedRequest, prefix: readonly Item[]): number;
}

const RESPONSES: ApiCase = {
  api: 'openai-responses',
  session: 'pi-responses',
  list: (r) => (r.api === 'openai-responses' && Array.isArray(r.wire.input) ? r.wire.input : []),
  systemItems: 1,
  cachedPrefix(source, prefix) {
    const wire = source.wire as { model: string; instructions?: string | null; tools?: unknown[] };
    const head = JSON.stringify({ model: wire.model, instructions: wire.instructions ?? null, tools: wire.tools ?? [] });
    const total = [head, ...prefix.map((i) => JSON.stringify(i))].reduce((sum, piece) => sum + tokens(piece), 0);
    return Math.floor(total / 128) * 128;
  },
};

const ANTHROPIC: ApiCase = {
  api: 'anthropic-messages',
  session: 'pi-anthropic',
  list: (r) => (r.api === 'anthropic-messages' ? r.wire.messages : []),
  systemItems: 0,
  cachedPrefix(source, prefix) {
    const wire = source.wire as { tools?: Item[]; system?: Item[] };
    const pieces = [
      ...(wire.tools ?? []).map((t) => bare(['tool', t])),
      ...(wire.system ?? []).map((b) => bare(['system', b])),
      ...prefix.flatMap((m) => blocksOf(m).map((b) => bare([m['role'], b]))),
    ];
    return pieces.reduce((sum, piece) => sum + tokens(piece), 0);
  },
};

describe.each([RESPONSES, ANTHROPIC])('pi through the gateway in $api', (c) => {
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

  it('pi finishes a long task: fork-mode writers from its own request, a rebuild on overflow, its later requests rewritten, no compaction of its own', { timeout: 150_000 }, async () => {
    const sid = c.session;
    const player = piModelPlayer({ writerKey: DAEMON_KEY, writersIdle: () => writersIdle(rig.client, sid), thinking: true });
    rig.model.setResponder((request) => player.respond(request));
    const dirs = await preparePi(scratch, {
      api: c.api,
      baseUrl: piBaseUrl(rig.gateway.baseURL, sid, c.api),
      apiKey: PI_KEY,
      model: { id: MODEL_ID, contextWindow: PI_CONTEXT_WINDOW, maxTokens: 4096, reasoning: true },
    });

    const events: PublishedEvent[] = [];
    const stream = rig.client.events(sid);
    const collecting = (async () => {
      for await (const e of stream) events.push(e);
    })();

    const pi = await runPi({ dirs, model: MODEL_ID, prompts: PROMPTS, timeoutS: 120 });
    expect(pi.stderr).toBe('');
    expect(pi.code).toBe(0);

    // pi did its task: every step of the script was asked for once, in order, every turn was answered, the files are on disk.
    expect(player.steps).toEqual(SCRIPT.map((_, i) => i));
    expect(await readFile(join(dirs.project, 'src/report.ts'), 'utf8')).toBe(EDITED_REPORT);
    expect(await readFile(join(dirs.project, 'src/index.ts'), 'utf8')).toBe(SOURCES.index);
    expect(await readFile(join(dirs.project, 'docs/summary.md'), 'utf8')).toBe(SOURCES.summary);
    const output = piEvents(pi.stdout);
    expect(output.filter((e) => e.type === 'agent_end')).toHaveLength(PROMPTS.length);
    const answers = piAnswers(output);
    expect(answers.map((m) => m.stopReason)).toEqual(STOP_REASONS);
    // pi never compacted: no compaction event, and no call without tools (its summarisation call) or with its
    // summarisation prompt reached the model. (With its compaction on it would have: its usage passed 40 000 − 16 384.)
    expect(output.filter((e) => e.type.startsWith('compaction') || e.type.startsWith('auto_retry'))).toEqual([]);
    const piRequests = rig.model.requests.filter((r) => keyOf(r) === PI_KEY);
    expect(piRequests).toHaveLength(SCRIPT.length);
    for (const r of piRequests) {
      expect(r.api).toBe(c.api);
      expect(r.conversation.tools.map((t) => t.name)).toEqual(['read', 'bash', 'edit', 'write']);
      expect(r.rawBody).not.toContain('context summarization assistant');
    }
    // The usage pi was told is that of what the model got: never above the usable window.
    expect(Math.max(...answers.map(contextTokens))).toBeLessThan(USABLE_WINDOW);

    // The session's writers settle before its log is read.
    await writersIdle(rig.client, sid);
    await rig.daemon.sessions.flushDecisions();
    stream.stop();
    await collecting;
    expect(gatewayWarnings).toEqual([]);
    // pi's history only grew: one daemon session, no new slice.
    expect([...rig.log.read(`session/${sid}-s1`)]).toEqual([]);
    const opened = [...rig.log.read(`session/${sid}`)][0]?.payload as { setup: { api?: string } };
    expect(opened.setup.api).toBe(c.api);

    const facts = sessionFacts(rig.log, sid);
    // The same ladder as in the chat API: the three rungs before the first rebuild, the re-armed ladder after it, and
    // its first rungs again after the second. How far the second ladder gets, and whether a rung after a rebuild finds
    // the writer of the one before still running (and queues as `pending`), depends on how much of each fitted context
    // the provider counts in each API's shape.
    expect(facts.thresholds.slice(0, 7)).toEqual([5_600, 11_200, 15_000, 5_600, 11_200, 15_000, 5_600]);
    expect(facts.thresholds.slice(7).every((t) => t === 11_200 || t === 15_000)).toBe(true);
    expect(facts.writersStarted.length).toBeGreaterThanOrEqual(7);
    expect(facts.writersStarted.slice(0, 3)).toEqual([
      ['fork', 'threshold'],
      ['fork', 'threshold'],
      ['fork', 'threshold'],
    ]);
    for (const [mode, trigger] of facts.writersStarted) expect([mode, ['threshold', 'pending'].includes(String(trigger))]).toEqual(['fork', true]);
    expect(facts.settled.map((s) => s.outcome)).toEqual(facts.writersStarted.map(() => 'success'));
    // Two rebuilds, on overflow, each rendered from a checkpoint.
    expect(facts.rebuildReasons).toEqual(['overflow', 'overflow']);
    expect(facts.rebuildOutcomes).toEqual(['rebuilt', 'rebuilt']);
    const rendered = facts.inputs.filter((r) => r.type === 'rebuild.rendered').map((r) => r.payload as { ok: boolean; tailIds: string[] });
    expect(rendered.map((r) => r.ok)).toEqual([true, true]);

    // pi's requests as the model got them: its own list up to the overflow, then its system prompt, the rebuilt context
    // (boundary and tail) and whatever pi added since, every later request extending the one before (Anthropic: apart
    // from the breakpoint pi moves forward every request).
    const history = (r: RecordedRequest): Item[] => c.list(r).slice(c.systemItems);
    const boundaryOf = (i: number): string => bare(history(piRequests[i] as RecordedRequest)[0]);
    const rewrites = piRequests.flatMap((_, i) => (i > 0 && boundaryOf(i) !== boundaryOf(i - 1) ? [i] : []));
    expect(rewrites).toHaveLength(2);
    expect(rewrites[0]).toBe(9);
    const [rewrittenFrom, secondRewrite] = rewrites as [number, number];
    const system = bare(c.list(piRequests[0] as RecordedRequest).slice(0, c.systemItems));
    for (let i = 1; i < piRequests.length; i++) {
      const r = piRequests[i] as RecordedRequest;
      const before = history(piRequests[i - 1] as RecordedRequest);
      const now = history(r);
      expect(bare(c.list(r).slice(0, c.systemItems))).toBe(system);
      // Append-only, except at a rewrite: there the history before pi's newest items gave way to the rebuilt context.
      if (!rewrites.includes(i)) expect(bare(now.slice(0, before.length))).toBe(bare(before));
      // Its newest item: the prompt that starts a turn, else the result of the call before.
      const newest = r.conversation.items.at(-1);
      const prompt = START.findIndex((s) => s === i);
      if (prompt >= 0) expect(newest?.text).toBe(PROMPTS[prompt]);
      else expect(newest?.toolResults.map((t) => t.callId)).toEqual([callId(i - 1)]);
    }
    rewrites.forEach((at, j) => {
      // A user turn of text opens the rebuilt context, its preserved tail follows, then what pi added since.
      const boundary = history(piRequests[at] as RecordedRequest)[0];
      expect(boundary?.['role']).toBe('user');
      expect(bare(boundary)).toContain('## Session checkpoint');
      expect(bare(boundary)).toContain('## Recent user input (verbatim)');
      // (the fresh result pi had just got ends the tail).
      expect(history(piRequests[at] as RecordedRequest)).toHaveLength(1 + (rendered[j]?.tailIds.length ?? 0));
    });
    // At the first rewrite, verbatim after the context: the `cat` output pi had just got (the model had not seen it).
    const fresh = piRequests[rewrittenFrom]?.conversation.items.at(-1)?.toolResults[0];
    expect(fresh?.callId).toBe(callId(8));
    expect(fresh?.output).toContain("export const MODULE = 'report';");
    expect(fresh?.output).not.toContain('content cleared');
    expect(piRequests[rewrittenFrom]?.rawBody).not.toContain(`"${callId(0)}"`);
    // pi saw the usage of what was sent: its context fell at each rewrite.
    expect(contextTokens(answers[rewrittenFrom])).toBeLessThan(contextTokens(answers[rewrittenFrom - 1]));
    expect(contextTokens(answers[secondRewrite])).toBeLessThan(contextTokens(answers[secondRewrite - 1]) / 2);
    // Every user prompt pi sent survives every rewritten request (in the rebuilt context or after it).
    for (let i = rewrittenFrom; i < piRequests.length; i++) {
      const sent = PROMPTS.filter((_, p) => (START[p] as number) <= i);
      for (const prompt of sent) expect(piRequests[i]?.rawBody).toContain(JSON.stringify(prompt).slice(1, -1));
    }
    if (c.api === 'anthropic-messages') {
      // Every request pi's model got alternates roles from a user turn, each tool result answering the assistant turn
      // before it, with at most four breakpoints: pi's three (system, last tool, newest user block), and once rewritten
      // the gateway's on the rebuilt context's last block.
      piRequests.forEach((r, i) => {
        const messages = c.list(r);
        messages.forEach((m, j) => {
          expect(m['role']).toBe(j % 2 === 0 ? 'user' : 'assistant');
          const uses = blocksOf(messages[j - 1]).filter((b) => b['type'] === 'tool_use').map((b) => b['id']);
          for (const b of blocksOf(m)) if (b['type'] === 'tool_result') expect(uses).toContain(b['tool_use_id']);
        });
        const rebuilt = rewrites.findLastIndex((at) => at <= i);
        // (At a rewrite pi's newest turn is the rebuilt context's last one: the gateway's breakpoint stands in for pi's.)
        expect(markers(r.wire)).toBe(rebuilt < 0 || rewrites.includes(i) ? 3 : 4);
        if (rebuilt >= 0) expect(blocksOf(messages[rendered[rebuilt]?.tailIds.length ?? 0]).at(-1)?.['cache_control']).toEqual({ type: 'ephemeral' });
      });
    }

    // Every writer forked from the bytes the model got from pi: its first request starts with exactly the items of the
    // pi request it forked from (Anthropic: the messages without breakpoints, the writer's task joined to the last
    // user turn), with pi's tools, system prompt and request fields, so the model's cache serves all of that prefix.
    const sources: number[] = [];
    for (const { writerId } of facts.settled) {
      const writer = writerFacts(rig.log, writerId);
      expect(writer.mode).toBe('fork');
      const first = rig.model.requests.find((r) => keyOf(r) === DAEMON_KEY && r.rawBody.includes(`/staging/${writerId}/`));
      if (first === undefined) throw new Error(`writer ${writerId} made no model request`);
      expect(first.api).toBe(c.api);
      const forked = c.list(first);
      const n = c.systemItems + writer.prefixMessages;
      const sameStart = (r: RecordedRequest): boolean => {
        const sent = c.list(r);
        if (sent.length < n || bare(sent.slice(0, n - 1)) !== bare(forked.slice(0, n - 1))) return false;
        const mine = forked[n - 1];
        const theirs = sent[n - 1];
        if (c.api === 'openai-responses') return bare(mine) === bare(theirs);
        return mine?.['role'] === theirs?.['role'] && bare(blocksOf(mine).slice(0, blocksOf(theirs).length)) === bare(blocksOf(theirs));
      };
      const sourceAt = piRequests.findIndex(sameStart);
      if (sourceAt < 0) throw new Error(`no pi request starts with writer ${writerId}'s prefix of ${n}`);
      sources.push(sourceAt);
      const source = piRequests[sourceAt] as RecordedRequest;
      const prefix = c.list(source).slice(0, n);
      // The fork is a prefix of a request the model answered (its whole prefix is then cached): the request that ended
      // there, or, for a writer covering part of a rebuilt context, the rewritten request that carried all of it.
      expect(c.list(source).length).toBeGreaterThanOrEqual(n);
      expect(JSON.stringify(first.wire.tools)).toBe(JSON.stringify(source.wire.tools));
      expect(first.wire.model).toBe(MODEL_ID);
      if (c.api === 'openai-responses') {
        // The items byte for byte in both bodies (reasoning items as the model sent them), then the writer's task; and
        // pi's request fields (its cache key among them).
        const bytes = `"input":${JSON.stringify(prefix).slice(0, -1)}`;
        expect(source.rawBody).toContain(bytes);
        expect(first.rawBody).toContain(bytes);
        expect(forked.length).toBeGreaterThan(n);
        for (const key of ['prompt_cache_key', 'reasoning', 'include', 'max_output_tokens']) expect(JSON.stringify((first.wire as Item)[key])).toBe(JSON.stringify((source.wire as Item)[key]));
      } else {
        // pi's messages without their breakpoints (thinking blocks and signatures as the model sent them), the writer's
        // task joined to the last user turn, roles alternating; pi's system blocks and tools as it sent them (its
        // breakpoints on them included), its request fields and beta header; at most four breakpoints.
        expect(forked).toHaveLength(n);
        expect(blocksOf(forked[n - 1]).length).toBeGreaterThan(blocksOf(prefix[n - 1]).length);
        forked.forEach((m, j) => expect(m['role']).toBe(j % 2 === 0 ? 'user' : 'assistant'));
        expect(JSON.stringify((first.wire as Item)['system'])).toBe(JSON.stringify((source.wire as Item)['system']));
        for (const key of ['thinking', 'max_tokens']) expect(JSON.stringify((first.wire as Item)[key])).toBe(JSON.stringify((source.wire as Item)[key]));
        expect(first.headers['anthropic-beta']).toBe(source.headers['anthropic-beta']);
        expect(markers(first.wire)).toBeLessThanOrEqual(4);
      }
      // The fork's first call is credited with its whole prefix from the loopback's simulated cache.
      const cached = c.cachedPrefix(source, prefix);
      expect(writer.usage[0]?.cached).toBe(cached);
      expect(writer.usage[0]?.prompt).toBeGreaterThan(cached);
      const perf = events.find((e) => e.type === 'writer.cache_perf' && e.writer_id === writerId);
      expect(perf).toMatchObject({ status: 'completed', num_llm_calls: 3 });
      expect(perf?.type === 'writer.cache_perf' ? perf.cache_hit_rate : 0).toBeGreaterThan(0.6);
    }
    // Each writer forked from the request before the one whose usage crossed its rung (the queued ones from the same);
    // those after a rebuild from the rewritten bytes (system, rebuilt context, pi's later items).
    expect(sources.slice(0, 5)).toEqual([1, 4, 5, 9, 9]);
    expect(sources.slice(5).every((at, k) => at >= (rewrites[0] ?? 0) && at >= (sources[4 + k] ?? 0))).toBe(true);

    const verified = verifySession(rig.log, sid);
    expect(verified.divergence).toBeNull();
    expect(verified.writers).toBe(facts.settled.length);
  });
});
