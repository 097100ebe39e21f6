/**
 * Fit benchmark: the agent never hits the wall.
 *
 * Part 1, per scenario (provider API × a 64 000- and a 32 000-token window): the gateway test's setup — an agent whose
 * tools Baton cannot write with, writers whose every draft fails validation, a loopback provider that counts tool
 * outputs three times as heavy as Baton's tokenizer and refuses a prompt above its window — one user prompt and thirty
 * tool steps through `BatonGateway`. Reported: the largest prompt the provider counted for a request forwarded after
 * the first rewrite, as a share of the window (target < 1.0 in every scenario), and how many were refused.
 *
 * Part 2: latency of an overflow rebuild that has to fit, with an existing checkpoint, over the full path
 * (`client.rebuild` through a `BatonDaemon` on an in-process bus): sessions on a 32 000-token model whose writer
 * succeeded at its single rung, followed by one user turn of 40 tool steps (outputs of 2–10 KB, the newest of 200 KB) —
 * far more than the usable window after the watermark, so every rebuild cuts older steps and truncates. Each session is
 * rebuilt once (the rebuild re-bases it). Reported: p50 / p99, the measures taken, the largest fitted total against
 * the usable window. The baseline of the same run: each session rebuilt once before its tool turn (same checkpoint,
 * a tail that fits as it is).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/fit.bench.ts` (env: FIT_BENCH_SESSIONS, default 200: a p99 over 200 samples is not just the slowest one).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { BatonClient, MemoryBus } from '@baton/client';
import type { Message, ProviderApi, PublishedEvent } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel } from '@baton/testing';
import { startGatewayRig } from '../test/support/gateway-rig.ts';
import { TOOL_LOOP_MODELS, afterRewrite, commandOutput, runToolLoop, toolLoopModel } from '../test/support/tool-loop-agents.ts';
import type { BenchRow, BenchSection } from './bench-types.ts';
import type { TargetCheck } from './main.ts';
import { AGENT_TOOLS, SYSTEM_PROMPT, WRITER_TOOLS, codingConversation } from './coding-conversation.ts';

const APIS: readonly ProviderApi[] = ['openai-chat', 'openai-responses', 'anthropic-messages'];
const WINDOWS = [64_000, 32_000] as const;
const STEPS = 30;

/** 32 000-token model, 4 000 output tokens: usable window 24 000, one rung at 40 % (9 600). */
const FIT_MODEL = { id: 'gpt-4o', context_window: 32_000, max_output_tokens: 4_000 };
const TOOL_STEPS = 40;
const HUGE_STEP = TOOL_STEPS;
const HUGE_BYTES = 200_000;
const APPEND_BATCH = 20;
const SETUP_CONCURRENCY = 4;
const WARMUP = 3;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

export const scenarioRow = (api: ProviderApi, window: number): string => `${api}, ${window / 1000}k window: largest forwarded after first rewrite / window`;

export const FIT_ROWS = {
  p50: 'fitted overflow rebuild p50 (full path)',
  p99: 'fitted overflow rebuild p99 (full path)',
} as const;

/** Part 1: one scenario through the gateway rig. */
async function scenario(api: ProviderApi, window: number): Promise<BenchRow[]> {
  const rig = await startGatewayRig({
    model: { usageScale: { tool: 3 }, contextWindow: window },
    gateway: { contextWindows: { [TOOL_LOOP_MODELS[api]]: window } },
  });
  try {
    rig.model.setResponder(toolLoopModel(STEPS));
    const sid = `fit-${api}-${window}`;
    const baseURL = api === 'anthropic-messages' ? `${rig.origin}/s/${sid}` : rig.sessionURL(sid);
    const start = performance.now();
    const result = await runToolLoop(api, baseURL, 'sk-fit-bench-0001', TOOL_LOOP_MODELS[api]);
    const seconds = (performance.now() - start) / 1000;
    const { agentRequests, first, statuses, reported } = afterRewrite(rig.tap.exchanges);
    const refused = statuses.filter((s) => s !== 200).length;
    // A refused request counts as the whole window (and more): the share is then reported as ≥ 1.
    const largest = Math.max(...reported.map((r) => r ?? Number.POSITIVE_INFINITY));
    return [
      {
        name: scenarioRow(api, window),
        value: first < 0 ? Number.NaN : round(largest / window, 3),
        unit: 'ratio',
        note:
          first < 0
            ? 'no request was rewritten'
            : `${largest} tokens; ${agentRequests} agent requests, first rewrite #${first + 1}, ${refused} refused after it; ${result.steps} steps done in ${round(seconds, 1)} s`,
      },
    ];
  } finally {
    await rig.stop();
  }
}

/** A user turn of `TOOL_STEPS` tool steps after the writer's conversation: bash calls and their outputs. */
function toolTurn(prefix: string): Message[] {
  const messages: Message[] = [{ id: `${prefix}u`, role: 'user', content: 'Now make the whole workspace build: run the build, read each failure and fix it, one package at a time.' }];
  for (let step = 1; step <= TOOL_STEPS; step++) {
    const call = `${prefix}c${step}`;
    messages.push({
      id: `${prefix}a${step}`,
      role: 'assistant',
      content: null,
      tool_calls: [{ id: call, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `npm run build -- --step ${step}` }) } }],
      finish_reason: 'tool_calls',
    });
    const bytes = step === HUGE_STEP ? HUGE_BYTES : 2_000 + ((step * 2_654_435) % 8_000);
    const output = commandOutput(step).repeat(Math.ceil(bytes / 2_400)).slice(0, bytes);
    messages.push({ id: `${prefix}r${step}`, role: 'tool', tool_call_id: call, content: output });
  }
  return messages;
}

interface FitRecord {
  readonly fit?: { readonly limit: number; readonly tokens: { readonly total: number }; readonly fits: boolean; readonly steps: readonly { readonly step: string }[] };
}

/** Part 2: fitted overflow rebuilds with an existing checkpoint. */
async function fittedRebuilds(n: number): Promise<BenchRow[]> {
  const conversation = codingConversation({ seed: 7, codeBytes: [800, 2_000], until: (usage) => usage >= 12_000 });
  const before = conversation.turns.flat();
  const loopback = await startLoopbackModel({ mode: 'extractive' });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-fit-bench-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const bus = new MemoryBus();
  const daemonTransport = bus.connect();
  const clientTransport = bus.connect();
  const daemon = BatonDaemon.start({ transport: daemonTransport, log, dataDir, poolSize: 2, model: { baseURL: loopback.baseURL, apiKey: 'bench' } });
  const client = new BatonClient(clientTransport, { timeoutMs: 120_000 });
  const appendAll = async (sid: string, list: readonly Message[]): Promise<void> => {
    for (let i = 0; i < list.length; i += APPEND_BATCH) await client.append(sid, list.slice(i, i + APPEND_BATCH));
  };
  // Rebuilds each session once, one at a time (warm-up sessions first, not counted): latencies and fit reports.
  const rebuildEach = async (list: readonly string[]): Promise<{ times: number[]; fits: (FitRecord['fit'] | undefined)[] }> => {
    const times: number[] = [];
    const fits: (FitRecord['fit'] | undefined)[] = [];
    for (const [i, sid] of list.entries()) {
      const start = performance.now();
      const reply = await client.rebuild(sid, { reason: 'overflow' });
      const ms = performance.now() - start;
      if (reply.outcome !== 'rebuilt') throw new Error(`session ${i}: rebuild outcome ${reply.outcome}`);
      if (i < WARMUP) continue;
      times.push(ms);
      fits.push(([...log.read(`session/${sid}`)].filter((r) => r.type === 'rebuild.rendered').at(-1)?.payload as FitRecord | undefined)?.fit);
    }
    return { times, fits };
  };
  try {
    const sids: string[] = new Array<string>(n + WARMUP);
    let retries = 0;
    const setupStart = performance.now();
    const setup = async (i: number): Promise<void> => {
      const opened = await client.open({ project_id: `fit-${i}`, model: FIT_MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['40%'] } });
      const sid = opened.session_id;
      const settled = (): Promise<PublishedEvent> => client.waitForEvent(sid, (e) => e.type === 'writer.settled', 60_000);
      let outcome = settled();
      await appendAll(sid, before);
      for (let attempt = 0; ; attempt++) {
        const event = await outcome;
        if (event.type === 'writer.settled' && event.outcome === 'success') break;
        if (attempt >= 3) throw new Error(`session ${i}: no successful writer after ${attempt + 1} attempts`);
        retries++;
        outcome = settled();
        await client.checkpoint(sid);
      }
      sids[i] = sid;
    };
    const eachSession = async (work: (i: number) => Promise<void>): Promise<void> => {
      let next = 0;
      await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, async () => {
        while (next < n + WARMUP) await work(next++);
      }));
    };
    await eachSession(setup);
    // The baseline of the same run: the same sessions, same checkpoint, a tail that fits as it is.
    const baseline = await rebuildEach(sids);
    if (baseline.fits.some((fit) => fit !== undefined && fit.steps.length > 0)) throw new Error('a baseline rebuild took fitting steps');
    await eachSession(async (i) => appendAll(sids[i] as string, toolTurn(`f${i}`)));
    const setupSeconds = (performance.now() - setupStart) / 1000;

    const { times, fits } = await rebuildEach(sids);
    const shares: number[] = [];
    const measures = new Map<string, number>();
    for (const fit of fits) {
      if (fit === undefined || fit.steps.length === 0) throw new Error('a rebuild took no fitting step: the scenario no longer measures fitting');
      shares.push(fit.tokens.total / fit.limit);
      for (const { step } of fit.steps) measures.set(step, (measures.get(step) ?? 0) + 1);
    }
    const again = baseline.times;
    return [
      { name: 'fitted rebuild sessions', value: n, unit: 'sessions', note: `${before.length} messages before the writer, then one turn of ${TOOL_STEPS} tool steps (${toolTurn('x').reduce((s, m) => s + (typeof m.content === 'string' ? m.content.length : 0), 0)} characters); set up in ${round(setupSeconds, 1)} s${retries > 0 ? `, ${retries} writer retries` : ''}` },
      { name: FIT_ROWS.p50, value: round(percentile(times, 50)), unit: 'ms' },
      { name: FIT_ROWS.p99, value: round(percentile(times, 99)), unit: 'ms', note: `max ${round(Math.max(...times))} ms` },
      { name: 'same sessions before the tool turn, nothing to fit p50', value: round(percentile(again, 50)), unit: 'ms', note: `p99 ${round(percentile(again, 99))} ms` },
      { name: 'fitted p50 / nothing-to-fit p50', value: round(percentile(times, 50) / percentile(again, 50)), unit: '×', note: `p99 ratio ${round(percentile(times, 99) / percentile(again, 99))} ×` },
      { name: 'fitted total / usable window (largest)', value: round(Math.max(...shares), 3), unit: 'ratio', note: `measures: ${[...measures].map(([k, v]) => `${k} ×${v}`).join(', ')}` },
    ];
  } finally {
    await daemon.stop();
    await clientTransport.close();
    await daemonTransport.close();
    await log.close();
    await loopback.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function benchFit(sessions = Number(process.env['FIT_BENCH_SESSIONS'] ?? 200)): Promise<BenchSection> {
  const rows: BenchRow[] = [];
  for (const window of WINDOWS) for (const api of APIS) rows.push(...(await scenario(api, window)));
  rows.push(...(await fittedRebuilds(Math.max(1, Math.floor(sessions) || 200))));
  return { title: 'Fit: forwarded requests against the window, fitted rebuild latency', rows };
}

export function fitTargets(section: BenchSection | undefined): TargetCheck[] {
  const value = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  const checks: TargetCheck[] = [];
  for (const window of WINDOWS) {
    for (const api of APIS) {
      const name = scenarioRow(api, window);
      checks.push({ label: name, value: value(name), unit: '', target: '< 1.0', pass: (v) => v < 1 });
    }
  }
  checks.push({ label: FIT_ROWS.p99, value: value(FIT_ROWS.p99), unit: 'ms', target: '< 50', pass: (v) => v < 50 });
  return checks;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const section = await benchFit();
  for (const row of section.rows) console.log(`${row.name}: ${row.value} ${row.unit}${row.note ? ` (${row.note})` : ''}`);
  for (const t of fitTargets(section)) console.log(`${t.value !== undefined && t.pass(t.value) ? 'PASS' : 'MISS'} ${t.label}: ${t.value} ${t.unit} (target ${t.target})`);
}
