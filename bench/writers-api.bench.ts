/**
 * Writers per provider API: the second fork-mode writer's cache hit rate on the loopback's simulated caches, for
 * sessions in the OpenAI chat, OpenAI Responses and Anthropic Messages APIs, each fed the way that API's agents feed
 * it — through the gateway, which records every call of the agent into a daemon session in the agent's API (native
 * Responses items and Anthropic messages), and whose threshold writers fork from the agent's exact request prefix.
 *
 * Per API, one after the other on the same gateway, daemon (pool of 2) and loopback (its own process, latency 50 ms
 * as in `writers`): many sessions at once, each an agent (`api-agents.ts`) playing the `writers` section's coding
 * conversation (user → read_file/bash call → a 3–5 KB TypeScript file or test output → answer, a ~100 ms pause
 * between turns), streamed, in its API's own shape:
 * - chat: system message, `tool` messages;
 * - Responses: a leading developer item as the system prompt, reasoning items with encrypted content echoed back,
 *   `function_call` / `function_call_output` items, `store: false`, `prompt_cache_key`;
 * - Anthropic: `tool_use` / `tool_result` blocks, a `cache_control` breakpoint on the system block and one on the
 *   newest user turn's last block, moved forward every request.
 * The usage the loopback reports (real o200k counts of what was sent) crosses the first rung (writer 1; the agent goes
 * on) and then the second (writer 2, once writer 1 settled). The session is done when both writers settled.
 *
 * Figures per API, for the first and the second writer of the sessions: the cache hit rate as the loopback's cache
 * reports it in that API's usage fields (`writer.cache_perf`: cached / prompt tokens over the writer's calls; chat
 * `prompt_tokens_details.cached_tokens`, Responses `input_tokens_details.cached_tokens`, Anthropic
 * `cache_read_input_tokens` over input + cache creation + cache read), median over sessions and pooled (all cached
 * tokens / all prompt tokens); and the writer's first call (the fork: the agent's cached prefix plus the writer's
 * task), from its log: its rate and the tokens it had to pay for.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/writers-api.bench.ts`
 * (env: WRITERS_API_BENCH_SESSIONS, default 100 per API).
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { ProviderApi } from '@baton/protocol';
import { APIS, CONTEXT_WINDOW, SECOND_RUNG, driveSession, startApiRig, type ApiRig, type DrivenSession } from './api-rig.ts';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { median, printStandalone, round1, round2, withChildren, type SectionTarget } from './bench-process.ts';
import { codingConversation } from './coding-conversation.ts';
import type { WriterRecord } from './writer-records.ts';

/** Mean pause between an agent's turns, jittered ± 50 % (as in `writers`). */
const THINK_MS = 100;
/** The loopback's latency (as in `writers`). */
const LATENCY_MS = 50;

const SHORT: Readonly<Record<ProviderApi, string>> = { 'openai-chat': 'chat', 'openai-responses': 'resp', 'anthropic-messages': 'anth' };

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Row names the targets read. */
export const WRITERS_API_ROWS = {
  median: (api: ProviderApi, nth: 1 | 2) => `${api}: ${nth === 1 ? '1st' : '2nd'} writer cache hit rate (median)`,
  pooled: (api: ProviderApi) => `${api}: 2nd writer cache hit rate (pooled)`,
} as const;

interface ApiRun {
  readonly api: ProviderApi;
  readonly sessions: readonly DrivenSession[];
  readonly seconds: number;
  readonly agentCalls: number;
  /** Why agent calls were sent again (a gateway 502, a failed connection). */
  readonly retried: readonly string[];
  /** The loopback's totals over the run (agents and writers): calls, prompt and cached tokens. */
  readonly loopback: { calls: number; prompt: number; cached: number };
}

async function runApi(rig: ApiRig, api: ProviderApi, sessions: number, seedBase: number, timeoutMs: number): Promise<ApiRun> {
  const start = performance.now();
  const deadline = start + timeoutMs;
  const before = await rig.stats();
  const runs = await Promise.all(
    Array.from({ length: sessions }, (_, i) => {
      const seed = seedBase + i;
      // Long enough for both rungs whatever the API's overhead (its own count is of the text alone).
      const plan = codingConversation({ seed, until: (usage) => usage >= SECOND_RUNG * 1.6 }).turns;
      return driveSession(rig, { api, sid: `${SHORT[api]}-${seed}`, plan, writers: 2, thinkMs: THINK_MS, deadline, seed });
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const after = await rig.stats();
  return {
    api,
    sessions: runs,
    seconds,
    agentCalls: runs.reduce((n, s) => n + s.agent.calls, 0),
    retried: runs.flatMap((s) => s.agent.retried),
    loopback: { calls: after.calls - before.calls, prompt: after.promptTokens - before.promptTokens, cached: after.cachedTokens - before.cachedTokens },
  };
}

/** Prompt and cached tokens of a writer's first model call, from its log. */
function firstCall(rig: ApiRig, w: WriterRecord): { prompt: number; cached: number } | undefined {
  const replied = [...rig.log.read(`writer/${w.writerId}`)].find((r) => r.type === 'model.replied');
  const usage = (replied?.payload as { usage?: { prompt: number; cached: number } } | undefined)?.usage;
  return usage !== undefined && usage.prompt > 0 ? usage : undefined;
}

/** Figures of the sessions' `nth` writers. */
interface NthWriters {
  readonly count: number;
  readonly rate: number;
  readonly pooled: number;
  readonly prompt: number;
  readonly cached: number;
  readonly calls: number;
  readonly firstCallRate: number;
  readonly firstCallMin: number;
  /** Tokens of the first call the cache did not cover (median). */
  readonly firstCallPaid: number;
}

function nthWriters(rig: ApiRig, run: ApiRun, nth: 1 | 2): NthWriters {
  const writers = run.sessions.flatMap((s) => s.writers[nth - 1] ?? []);
  const prompt = writers.reduce((n, w) => n + w.prompt, 0);
  const cached = writers.reduce((n, w) => n + w.cached, 0);
  const first = writers.flatMap((w) => firstCall(rig, w) ?? []);
  const firstRates = first.map((u) => u.cached / u.prompt);
  return {
    count: writers.length,
    rate: round3(median(writers.flatMap((w) => w.hitRate ?? []))),
    pooled: round3(cached / Math.max(1, prompt)),
    prompt,
    cached,
    calls: writers.reduce((n, w) => n + w.calls, 0),
    firstCallRate: round3(median(firstRates)),
    firstCallMin: round3(Math.min(...firstRates)),
    firstCallPaid: Math.round(median(first.map((u) => u.prompt - u.cached))),
  };
}

/** Why writers did not succeed, from their own logs (the last `*failed` record), counted. */
function failures(rig: ApiRig, run: ApiRun): string {
  const counts = new Map<string, number>();
  const count = (key: string): void => void counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const s of run.sessions) {
    for (const w of s.writers) {
      if (w.outcome === 'success') continue;
      const failed = [...rig.log.read(`writer/${w.writerId}`)].reverse().find((r) => r.type.endsWith('failed'));
      const payload = failed?.payload as { message?: unknown; reason?: unknown } | undefined;
      const detail = payload?.message ?? payload?.reason ?? '';
      const text = (typeof detail === 'string' ? detail : JSON.stringify(detail)).slice(0, 100);
      count(`${w.outcome ?? 'unsettled'}${failed !== undefined ? ` at ${failed.type}: ${text}` : ''}`);
    }
    if (s.writers.length < 2) count('session with fewer than 2 writers');
  }
  return [...counts].map(([k, n]) => `${n}× ${k}`).join('; ');
}

/** The rows of one API: each writer's rates, then how the run went. */
function apiRows(rig: ApiRig, run: ApiRun): BenchRow[] {
  const rows: BenchRow[] = [];
  const byNth = [nthWriters(rig, run, 1), nthWriters(rig, run, 2)] as const;
  for (const [k, w] of byNth.entries()) {
    const nth = (k + 1) as 1 | 2;
    rows.push({
      name: WRITERS_API_ROWS.median(run.api, nth),
      value: w.rate,
      unit: 'ratio',
      note: `${w.count} writers, pooled ${w.pooled} (${w.cached} of ${w.prompt} prompt tokens in ${w.calls} calls); 1st call ${w.firstCallRate} (min ${w.firstCallMin}), ${w.firstCallPaid} tokens not cached (median)`,
    });
  }
  rows.push({ name: WRITERS_API_ROWS.pooled(run.api), value: byNth[1].pooled, unit: 'ratio', note: 'all cached / all prompt tokens of the 2nd writers' });
  const all = run.sessions.flatMap((s) => s.writers);
  const problems = failures(rig, run);
  const retried = new Map<string, number>();
  for (const why of run.retried) retried.set(why, (retried.get(why) ?? 0) + 1);
  rows.push({
    name: `${run.api}: sessions run in`,
    value: round1(run.seconds),
    unit: 's',
    note:
      `${all.filter((w) => w.outcome === 'success').length} of ${all.length} writers success, ${all.filter((w) => w.mode === 'fork').length} fork${problems !== '' ? ` (${problems})` : ''}; ` +
      `sessions end at ${Math.round(median(run.sessions.map((s) => s.agent.lastUsage)))} tokens (median); ${run.agentCalls} agent calls` +
      `${run.retried.length > 0 ? ` (sent again: ${[...retried].map(([k, n]) => `${n}× ${k}`).join('; ')})` : ''}, ` +
      `${run.loopback.calls} loopback calls (cached ${round3(run.loopback.cached / Math.max(1, run.loopback.prompt))} of all prompt tokens)`,
  });
  return rows;
}

export interface WritersApiBenchOptions {
  /** Sessions per API (default WRITERS_API_BENCH_SESSIONS or 100). */
  readonly sessions?: number;
  /** Per-API deadline for every session's writers to settle (default 10 min). */
  readonly timeoutMs?: number;
}

export async function benchWritersApi(options: WritersApiBenchOptions = {}): Promise<BenchSection> {
  const sessions = Math.max(1, Math.floor(options.sessions ?? Number(process.env['WRITERS_API_BENCH_SESSIONS'] ?? 100)) || 100);
  const timeoutMs = options.timeoutMs ?? 600_000;
  const loadStart = loadavg()[0] ?? Number.NaN;
  return await withChildren(async (track) => {
    const rig = await startApiRig(track, { latencyMs: LATENCY_MS });
    try {
      const rows: BenchRow[] = [
        {
          name: 'sessions per API',
          value: sessions,
          unit: 'sessions',
          note: `each 2 threshold writers (rungs 9 600 / 19 200 of a usable window of 48 000); through the gateway (agents' calls recorded by it, writers forked by the daemon), not the daemon's protocol directly; loopback in its own process, latency ${LATENCY_MS} ms; daemon pool 2; window ${CONTEXT_WINDOW}`,
        },
      ];
      for (const [k, api] of APIS.entries()) rows.push(...apiRows(rig, await runApi(rig, api, sessions, (k + 1) * 10_000, timeoutMs)));
      if (rig.problems.size > 0) {
        rows.push({ name: 'daemon and gateway warnings', value: [...rig.problems.values()].reduce((a, b) => a + b, 0), unit: '', note: [...rig.problems].map(([k, n]) => `${n}× ${k}`).join('; ').slice(0, 400) });
      }
      rows.push({
        name: 'load average (1 min) at the end',
        value: round2(loadavg()[0] ?? Number.NaN),
        unit: '',
        note: `${round2(loadStart)} at the start; ${cpus().length} cores shared by the agents, the gateway, the daemon, the loopback and anything else running`,
      });
      return { title: `Checkpoint writers per API (${sessions} sessions per API, fork mode, through the gateway, loopback model)`, rows };
    } finally {
      await rig.close();
    }
  });
}

/** Target lines for `bench/main.ts`. */
export function writersApiTargets(section: BenchSection | undefined): SectionTarget[] {
  const value = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return APIS.map((api) => ({
    label: `writers per API: 2nd writer cache hit rate (median), ${api}`,
    value: value(WRITERS_API_ROWS.median(api, 2)),
    unit: 'ratio',
    target: '≥ 0.9',
    pass: (v: number) => v >= 0.9,
  }));
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const section = await benchWritersApi();
  printStandalone(section, (performance.now() - started) / 1000);
}
