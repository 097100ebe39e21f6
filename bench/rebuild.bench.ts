/**
 * Rebuild benchmark: latency of a manual rebuild with an existing checkpoint over the full path — `client.rebuild`
 * through a `BatonDaemon` on an in-process `MemoryTransport` (log append, fold in the session's worker, render from
 * the memory files in the worker, the rendered input logged and folded, the context fetched, encoded and parsed by
 * the client) — on 500-message sessions, against reading the same memory files raw, and the size of the rebuilt
 * boundary message against the rebuild caps.
 *
 * Setup, per session (identical sessions, four set up at a time; a failed writer is retried): open with a
 * single rung (`50%` of a 168 000-token usable window), append a coding conversation whose real-token usage crosses
 * it around message 400, wait for the writer (fork mode, loopback model) to succeed so a watermark exists, then
 * append up to 500 messages. Each rebuild re-bases its session (the context becomes boundary + tail), so every
 * session is rebuilt exactly once for the headline figures; a second rebuild of each (re-based) session is reported
 * on its own line. Rebuilds run one at a time on an otherwise idle daemon.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/rebuild.bench.ts` (env: REBUILD_BENCH_SESSIONS, default 100).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { countTokens } from 'gpt-tokenizer';
import { DEFAULT_REBUILD_CAPS, REBUILD_CAP_KEYS } from '@baton/memory-store';
import { BatonClient, MemoryBus } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { type Message, type OpenReply, type OpenRequest, type PublishedEvent } from '@baton/protocol';
import { startLoopbackModel } from '@baton/testing';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { AGENT_TOOLS, SYSTEM_PROMPT, WRITER_TOOLS, codingConversation } from './coding-conversation.ts';

/** 200 000-token model with 16 000 output tokens: usable window 168 000; the single rung at 50 % is 84 000. */
const MODEL = { id: 'gpt-4o', context_window: 200_000, max_output_tokens: 16_000 };
const RUNG = 84_000;
const MESSAGES = 500;
const TURNS = MESSAGES / 4;
/** Messages per append while setting up. */
const APPEND_BATCH = 20;
/** Sessions set up at once. */
const SETUP_CONCURRENCY = 4;
/** Sessions rebuilt before measuring (not counted). */
const WARMUP = 5;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Row names the targets read. */
export const REBUILD_ROWS = {
  p50: 'rebuild p50 (full path)',
  p99: 'rebuild p99 (full path)',
  rawP50: 'raw read of checkpoint.md + MEMORY.md + notes.md p50',
  ratio: 'rebuild p50 / raw read p50',
  tokens: 'boundary message tokens',
  capSum: 'sum of rebuild caps',
  tokensVsCaps: 'boundary tokens / sum of caps',
} as const;

interface Prepared {
  readonly sid: string;
  readonly memory: OpenReply['memory'];
}

export async function benchRebuild(sessions = Number(process.env['REBUILD_BENCH_SESSIONS'] ?? 100)): Promise<BenchSection> {
  const n = Math.max(1, Math.floor(sessions) || 100);
  // One conversation for every session (ids are per session): usage crosses the rung around message 400.
  const conversation = codingConversation({ seed: 1, codeBytes: [1_500, 4_500], until: (_usage, turn) => turn + 1 >= TURNS });
  const crossing = conversation.usageAfter.findIndex((u) => u >= RUNG);
  if (crossing < 0) throw new Error(`the conversation never reaches the rung (${conversation.tokens} tokens)`);
  const messages = conversation.turns.flat();
  const beforeWriter = messages.slice(0, (crossing + 1) * 4);
  const afterWriter = messages.slice((crossing + 1) * 4);

  const loopback = await startLoopbackModel({ mode: 'extractive' });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-rebuild-bench-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const bus = new MemoryBus();
  const daemonTransport = bus.connect();
  const clientTransport = bus.connect();
  const daemon = BatonDaemon.start({
    transport: daemonTransport,
    log,
    dataDir,
    poolSize: 2,
    model: { baseURL: loopback.baseURL, apiKey: 'bench' },
    tail: { minTokens: 1_500, maxTokens: 4_000, minTextMessages: 3 },
  });
  const client = new BatonClient(clientTransport, { timeoutMs: 120_000 });
  const appendAll = async (sid: string, list: readonly Message[]): Promise<void> => {
    for (let i = 0; i < list.length; i += APPEND_BATCH) await client.append(sid, list.slice(i, i + APPEND_BATCH));
  };
  try {
    // ---- setup: a few sessions at a time, each with one successful writer.
    const prepared: Prepared[] = new Array<Prepared>(n + WARMUP);
    let retries = 0;
    const setupStart = performance.now();
    const setup = async (i: number): Promise<void> => {
      const open: OpenRequest = {
        project_id: `shop-${i}`,
        model: MODEL,
        system: SYSTEM_PROMPT,
        tools: AGENT_TOOLS,
        writer_tools: WRITER_TOOLS,
        checkpoint: { thresholds: ['50%'] },
      };
      const opened = await client.open(open);
      const sid = opened.session_id;
      const settled = (): Promise<PublishedEvent> => client.waitForEvent(sid, (e) => e.type === 'writer.settled', 60_000);
      let outcome = settled();
      await appendAll(sid, beforeWriter);
      // A writer that failed is asked for again (manual checkpoint): the rebuild must find a watermark.
      for (let attempt = 0; ; attempt++) {
        const event = await outcome;
        if (event.type === 'writer.settled' && event.outcome === 'success') break;
        if (attempt >= 3) throw new Error(`session ${i}: no successful writer after ${attempt + 1} attempts`);
        retries++;
        outcome = settled();
        await client.checkpoint(sid);
      }
      await appendAll(sid, afterWriter);
      prepared[i] = { sid, memory: opened.memory };
    };
    let nextSession = 0;
    await Promise.all(
      Array.from({ length: SETUP_CONCURRENCY }, async () => {
        while (nextSession < n + WARMUP) await setup(nextSession++);
      }),
    );
    const setupSeconds = (performance.now() - setupStart) / 1000;
    const status = await client.status((prepared[0] as Prepared).sid);

    // ---- rebuilds, one at a time.
    const first: number[] = [];
    const second: number[] = [];
    const boundaryTokens: number[] = [];
    const contextLengths: number[] = [];
    let outcomes = 0;
    // Where the time goes, from the session log's `at` stamps (ms clock): send → `rebuild.requested` logged (its
    // append starts), → `rebuild.rendered` logged (requested append durable, fold, render in the worker, result back),
    // → reply received (rendered append durable, fold, context fetched from the worker, encoded, parsed).
    const phases: [number[], number[], number[]] = [[], [], []];
    for (const [i, { sid }] of prepared.entries()) {
      const sentAt = Date.now();
      const start = performance.now();
      const reply = await client.rebuild(sid, { reason: 'manual' });
      const ms = performance.now() - start;
      const receivedAt = Date.now();
      if (reply.outcome !== 'rebuilt') throw new Error(`session ${i}: rebuild outcome ${reply.outcome}`);
      if (i < WARMUP) continue;
      first.push(ms);
      const records = [...log.read(`session/${sid}`)];
      const requestedAt = records.find((r) => r.type === 'rebuild.requested')?.at;
      const renderedAt = records.find((r) => r.type === 'rebuild.rendered')?.at;
      if (requestedAt !== undefined && renderedAt !== undefined) {
        phases[0].push(requestedAt - sentAt);
        phases[1].push(renderedAt - requestedAt);
        phases[2].push(receivedAt - renderedAt);
      }
      outcomes++;
      const boundary = reply.context[0];
      boundaryTokens.push(countTokens(typeof boundary?.content === 'string' ? boundary.content : JSON.stringify(boundary?.content ?? '')));
      contextLengths.push(reply.context.length);
    }
    for (const { sid } of prepared.slice(WARMUP)) {
      const start = performance.now();
      await client.rebuild(sid, { reason: 'manual' });
      second.push(performance.now() - start);
    }

    // ---- the same memory files read raw, per session (warm page cache, as for the rebuilds).
    const raw: number[] = [];
    for (const { memory } of prepared) await Promise.all([memory.checkpoint, memory.memory, memory.notes].map((p) => readFile(p, 'utf8')));
    for (const { memory } of prepared.slice(WARMUP)) {
      const start = performance.now();
      await Promise.all([memory.checkpoint, memory.memory, memory.notes].map((p) => readFile(p, 'utf8')));
      raw.push(performance.now() - start);
    }

    // One durable append to the same log, alone (the rebuild path waits for two in sequence).
    const appends: number[] = [];
    for (let i = 0; i < 100; i++) {
      const start = performance.now();
      await log.append('bench/append-latency', [{ type: 'bench.probe', at: Date.now(), payload: { i } }]);
      appends.push(performance.now() - start);
    }

    const capSum = REBUILD_CAP_KEYS.filter((key) => key !== 'recent_user_per_msg').reduce((sum, key) => sum + DEFAULT_REBUILD_CAPS[key], 0);
    const p50 = percentile(first, 50);
    const rawP50 = percentile(raw, 50);
    const tokens = percentile(boundaryTokens, 50);
    const fileTokens = status.files.checkpoint.tokens + status.files.memory.tokens + status.files.notes.tokens;
    const rows: BenchRow[] = [
      {
        name: 'sessions',
        value: n,
        unit: 'sessions',
        note: `${messages.length} messages, ${conversation.tokens} tokens each; writer covers ${beforeWriter.length} messages; set up in ${round(setupSeconds, 1)} s${retries > 0 ? `, ${retries} writer retries` : ''}`,
      },
      { name: REBUILD_ROWS.p50, value: round(p50), unit: 'ms', note: `${outcomes} sessions rebuilt once each (after ${WARMUP} warm-up), one at a time` },
      { name: REBUILD_ROWS.p99, value: round(percentile(first, 99)), unit: 'ms', note: `max ${round(Math.max(...first))} ms; target < 50 ms` },
      { name: 'phase: send → rebuild.requested logged p50', value: percentile(phases[0], 50), unit: 'ms', note: `p99 ${percentile(phases[0], 99)} ms; ms clock` },
      { name: 'phase: → rebuild.rendered logged p50', value: percentile(phases[1], 50), unit: 'ms', note: `p99 ${percentile(phases[1], 99)} ms; append durable, fold, render in the worker` },
      { name: 'phase: → reply received p50', value: percentile(phases[2], 50), unit: 'ms', note: `p99 ${percentile(phases[2], 99)} ms; append durable, fold, context fetched, encoded, parsed` },
      { name: 'durable log append alone p50', value: round(percentile(appends, 50)), unit: 'ms', note: `p99 ${round(percentile(appends, 99))} ms; the path waits for 2 in sequence (requested, rendered)` },
      { name: 'second rebuild of the same session p50', value: round(percentile(second, 50)), unit: 'ms', note: `re-based session; p99 ${round(percentile(second, 99))} ms` },
      { name: REBUILD_ROWS.rawP50, value: round(rawP50 * 1000, 1), unit: 'µs', note: `3 readFile in parallel; ${fileTokens} tokens on disk; p99 ${round(percentile(raw, 99) * 1000, 1)} µs` },
      { name: REBUILD_ROWS.ratio, value: round(p50 / rawP50, 1), unit: '×' },
      { name: REBUILD_ROWS.tokens, value: tokens, unit: 'tokens', note: `countTokens of the boundary text (median); context ${percentile(contextLengths, 50)} messages` },
      { name: REBUILD_ROWS.capSum, value: capSum, unit: 'tokens', note: 'DEFAULT_REBUILD_CAPS, all but recent_user_per_msg' },
      { name: REBUILD_ROWS.tokensVsCaps, value: round(tokens / capSum, 3), unit: '×' },
    ];
    return { title: `Rebuild with an existing checkpoint (${MESSAGES}-message sessions, MemoryTransport)`, rows };
  } finally {
    await daemon.stop();
    await clientTransport.close();
    await daemonTransport.close();
    await log.close();
    await loopback.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Target lines for `bench/main.ts`: p99 < 50 ms. */
export function rebuildTargets(section: BenchSection | undefined): {
  label: string;
  value: number | undefined;
  unit: string;
  target: string;
  pass: (value: number) => boolean;
}[] {
  const p99 = section?.rows.find((r) => r.name === REBUILD_ROWS.p99)?.value;
  return [{ label: 'rebuild: p99 over the full path', value: p99, unit: 'ms', target: '< 50', pass: (v) => v < 50 }];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const section = await benchRebuild();
  console.log(section.title);
  for (const row of section.rows) console.log(`  ${row.name.padEnd(52)} ${String(row.value).padStart(10)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  console.log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
