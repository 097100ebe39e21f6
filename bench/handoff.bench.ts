/**
 * Handoff: how long the daemon takes to grant a handoff of a session that has a committed checkpoint (the worker
 * renders the session's context for another API and a 32 k window, the grant is logged, the token returned), and how
 * much of the inserted context the new agent's second request reads from the provider's prompt cache.
 *
 * Set-up, all in this process: a real nats-server, a daemon (pool 2, LMDB log in a temp dir) on its own connection, a
 * client on another, the extractive loopback model (its simulated OpenAI prefix cache), and a gateway. One session
 * plays 12 turns of a coding conversation, a writer commits its checkpoint, 4 more turns follow it. Then:
 * 1. `HANDOFF_BENCH_GRANTS` (default 300) handoffs of it to the Responses API for a 32 k window, one at a time after
 *    20 warm-ups, each timed by the client from send to reply (the token is new every time; nothing is claimed);
 * 2. a chat agent (the openai SDK) claims one token through the gateway's `/h/<token>/v1` and makes two calls: the
 *    loopback's usage of the second call says how many prompt tokens it found cached. The hit on the inserted context
 *    is that figure over the prompt tokens of the first call (system prompt + inserted context + the first user
 *    message: everything the two calls share, the inserted context most of it), at most 1.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/handoff.bench.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import { countTokensOnce } from '@baton/memory-store';
import { viewOf } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { startLoopbackModel, startNatsServer } from '@baton/testing';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { printStandalone, quantile, round2, type SectionTarget } from './bench-process.ts';
import { AGENT_TOOLS, MODEL, SYSTEM_PROMPT, TEST_TAIL, WRITER_TOOLS, conversation } from '../test/support/conversation.ts';

const GRANTS = Number(process.env['HANDOFF_BENCH_GRANTS'] ?? 300);
const WARMUP = 20;

export const HANDOFF_ROWS = {
  p50: 'handoff with a checkpoint, p50',
  p99: 'handoff with a checkpoint, p99',
  cacheHit: "new session's 2nd request: cached share of what it shares with the 1st",
} as const;

export async function benchHandoff(): Promise<BenchSection> {
  const nats = await startNatsServer();
  const model = await startLoopbackModel({ mode: 'extractive' });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-bench-handoff-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const daemonTransport = await NatsTransport.connect({ servers: nats.url });
  const clientTransport = await NatsTransport.connect({ servers: nats.url });
  const daemon = BatonDaemon.start({ transport: daemonTransport, log, dataDir, poolSize: 2, model: { baseURL: model.baseURL, apiKey: 'bench', maxRetries: 0 }, tail: TEST_TAIL });
  const client = new BatonClient(clientTransport, { timeoutMs: 60_000 });
  const gateway = await BatonGateway.start({ upstream: model.baseURL, client });
  const rows: BenchRow[] = [];
  try {
    await daemon.ready();
    const sid = 'bench-handoff';
    await client.open({ session_id: sid, project_id: 'bench', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS, checkpoint: { thresholds: ['95%'] } });
    await client.append(sid, conversation(12, { prefix: 'h', start: 2_000, step: 1_000 }));
    await client.checkpoint(sid);
    await daemon.sessions.waitWritersIdle(120_000);
    await client.append(sid, conversation(4, { prefix: 'k', start: 15_000, step: 1_000 }));
    const target = { to: 'openai-responses' as const, model: { id: 'gpt-4o', context_window: 32_000 } };
    let contextTokens = 0;
    for (let i = 0; i < WARMUP; i++) await client.handoff(sid, target);
    const times: number[] = [];
    // A floor under the same load, interleaved: a `status` of the same session (a worker call, no log write).
    const floor: number[] = [];
    for (let i = 0; i < GRANTS; i++) {
      const s0 = performance.now();
      await client.status(sid);
      floor.push(performance.now() - s0);
      const t0 = performance.now();
      const grant = await client.handoff(sid, target);
      times.push(performance.now() - t0);
      if (grant.basis !== 'checkpoint+messages') throw new Error(`unexpected basis ${grant.basis}`);
      contextTokens = countTokensOnce(viewOf(grant.context[0] as never).text);
    }
    times.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    rows.push({ name: HANDOFF_ROWS.p50, value: round2(quantile(times, 0.5)), unit: 'ms', note: `${GRANTS} grants, Responses API, 32 k window; load average ${loadavg()[0]?.toFixed(1)}` });
    rows.push({ name: HANDOFF_ROWS.p99, value: round2(quantile(times, 0.99)), unit: 'ms' });
    rows.push({ name: 'status of the same session, interleaved, p50', value: round2(quantile(floor, 0.5)), unit: 'ms', note: 'a floor under the same load' });
    rows.push({ name: 'status of the same session, interleaved, p99', value: round2(quantile(floor, 0.99)), unit: 'ms' });
    rows.push({ name: 'handoff / status, p50', value: round2(quantile(times, 0.5) / quantile(floor, 0.5)), unit: '×' });
    rows.push({ name: 'inserted context (o200k tokens)', value: contextTokens, unit: 'tokens', note: 'fitted to half the usable window of 32 k (10 800)' });

    // The new agent: two calls through the handoff base URL.
    const grant = await client.handoff(sid, { to: 'openai-chat', model: { id: 'gpt-4o', context_window: 32_000 } });
    const sdk = new OpenAI({ baseURL: `${gateway.baseURL.replace(/\/v1$/, '')}/h/${grant.token}/v1`, apiKey: 'sk-bench-new-agent', maxRetries: 0 });
    const tools = AGENT_TOOLS as OpenAI.Chat.Completions.ChatCompletionTool[];
    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are pi, a coding agent.' },
      { role: 'user', content: 'Carry on with the task.' },
    ];
    const first = await sdk.chat.completions.create({ model: 'gpt-4o', messages: history, tools });
    history.push({ role: 'assistant', content: first.choices[0]?.message.content ?? 'ok' });
    history.push({ role: 'user', content: 'Go on.' });
    const second = await sdk.chat.completions.create({ model: 'gpt-4o', messages: history, tools });
    const prompt1 = first.usage?.prompt_tokens ?? 0;
    const cached2 = second.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    rows.push({ name: '1st request prompt tokens', value: prompt1, unit: 'tokens' });
    rows.push({ name: '2nd request cached tokens', value: cached2, unit: 'tokens', note: 'loopback prefix cache, 128-token blocks' });
    rows.push({ name: HANDOFF_ROWS.cacheHit, value: round2(Math.min(1, prompt1 === 0 ? 0 : cached2 / prompt1)), unit: '×' });
  } finally {
    await gateway.close();
    await daemon.stop();
    await clientTransport.close();
    await daemonTransport.close();
    await log.close();
    await model.close();
    await nats.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  return { title: 'Handoff: grant latency with a checkpoint, prompt cache of the inserted context', rows };
}

export function handoffTargets(section: BenchSection | undefined): SectionTarget[] {
  const row = (name: string) => section?.rows.find((r) => r.name === name);
  return [
    { label: 'handoff: p99 with an existing checkpoint', value: row(HANDOFF_ROWS.p99)?.value, unit: 'ms', target: '< 50', pass: (v) => v < 50 },
    { label: "handoff: new session's 2nd request cache hit on the inserted context", value: row(HANDOFF_ROWS.cacheHit)?.value, unit: '×', target: '≥ 0.9', pass: (v) => v >= 0.9 },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const t0 = performance.now();
  const section = await benchHandoff();
  printStandalone(section, (performance.now() - t0) / 1000);
}
