/**
 * Instant compaction: how long the gateway takes to answer a coding agent's own compaction request from the session's
 * checkpoint (no model call), against the same request answered upstream by the loopback model as a summarisation
 * call — side by side in one run, from one client in its own process.
 *
 * Set-up: sessions on the OpenAI Responses API, run through the gateway the way Codex sends them (leading developer
 * item, reasoning items echoed, `store: false`, streamed; `api-agents.ts`), each playing the `writers` section's coding
 * conversation until both threshold writers settled (rungs 9 600 and 19 200: a checkpoint covers most of the history,
 * ~20 000 tokens of it). Daemon (pool 2) and gateway in this process, the loopback in its own, the timing client in a
 * third (`timed-post-child.ts`). Once no writer runs, per session, one at a time, Codex's compaction request — its
 * history, then Codex's compaction prompt as a user item, no tools, `stream: true`, header `x-codex-turn-metadata:
 * {"request_kind":"compaction",…}` — is sent three ways, the order rotating from session to session:
 * 1. through the gateway, which answers it from the checkpoint (a daemon rebuild with reason `compaction`, rendered
 *    from the checkpoint; the boundary text is the summary). Checked: the answer is the checkpoint and the loopback got
 *    no call;
 * 2. straight to the loopback, whose summarisation call answers it (its extractive model: a summary of the
 *    conversation in checkpoint form, made from the request's items) after a delay of `latencyMs` (default 50 ms, the
 *    latency the `writers` section gives its loopback; a real summarisation call generates thousands of tokens and
 *    takes seconds);
 * 3. the same with no added delay: the loopback's own work only (parsing the request, its simulated prefix cache over
 *    every item, the extractive summary), a floor no model reaches.
 * Each session's compaction is answered once through the gateway (it rebuilds the session), so there is one sample per
 * session per path. Times are the client's: send → answer complete (and first byte).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/instant-compaction.bench.ts`
 * (env: INSTANT_COMPACTION_BENCH_SESSIONS, default 100;
 * INSTANT_COMPACTION_BENCH_LATENCY_MS, default 50).
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ResponsesAgent } from './api-agents.ts';
import { SECOND_RUNG, driveSession, startApiRig, type ApiRig, type DrivenSession } from './api-rig.ts';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { median, printStandalone, quantile, round1, round2, spawnBenchChild, withChildren, type BenchChild, type SectionTarget } from './bench-process.ts';
import { codingConversation } from './coding-conversation.ts';
import { DELAY_HEADER, SUMMARY_HEADER } from './planned-reply.ts';

/** Codex's compaction prompt (codex-cli 0.171.0), sent as the last user item of its compaction request. */
const CODEX_COMPACTION_PROMPT =
  'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n\nInclude:\n- Current progress and key decisions made\n- Important context, constraints, or user preferences\n- What remains to be done (clear next steps)\n- Any critical data, examples, or references needed to continue\n\nBe concise, structured, and focused on helping the next LLM seamlessly continue the work.\n';

const WARMUP_SESSIONS = 3;
/** Sessions being filled at once during the set-up. */
const FILL_CONCURRENCY = 16;

type Path = 'gateway' | 'loopback' | 'loopback-0';
/** The six orders of the three paths, one per session in turn. */
const ORDERS: readonly (readonly Path[])[] = [
  ['gateway', 'loopback', 'loopback-0'],
  ['loopback', 'loopback-0', 'gateway'],
  ['loopback-0', 'gateway', 'loopback'],
  ['gateway', 'loopback-0', 'loopback'],
  ['loopback-0', 'loopback', 'gateway'],
  ['loopback', 'gateway', 'loopback-0'],
];

/** Row names the targets read. */
export const INSTANT_COMPACTION_ROWS = {
  gatewayP50: 'instant compaction through the gateway p50',
  gatewayP99: 'instant compaction through the gateway p99',
  ratio: (latencyMs: number) => `loopback summarisation (+${latencyMs} ms) / instant compaction, p50`,
  ratioZero: 'loopback summarisation (no added latency) / instant compaction, p50',
} as const;

interface Timed {
  readonly ttfb: number;
  readonly total: number;
  readonly text: string;
}

async function post(timer: BenchChild, url: string, headers: Record<string, string>, body: string): Promise<Timed> {
  timer.send({ type: 'post', url, headers, body });
  const m = await timer.next('post', 120_000);
  return { ttfb: Number(m['ttfb']), total: Number(m['total']), text: String(m['text']) };
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function inPool<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const at = next++;
        out[at] = await work(items[at] as T, at);
      }
    }),
  );
  return out;
}

/** Waits until no writer runs or waits anywhere (at most 2 minutes). */
async function writersIdle(rig: ApiRig): Promise<void> {
  const end = Date.now() + 120_000;
  for (;;) {
    const status = await rig.client.runtimeStatus();
    if (status.writers.running === 0 && status.writers.queued === 0) return;
    if (Date.now() > end) throw new Error('writers still running after 2 minutes');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The text of a streamed Responses answer's `response.completed` output. */
function answerText(sse: string): string {
  const line = sse.split('\n').find((l) => l.startsWith('data:') && l.includes('"response.completed"'));
  const response = (JSON.parse(line?.slice(5) ?? '{}') as { response?: { output?: { content?: { text?: string }[] }[] } }).response;
  return (response?.output ?? []).flatMap((o) => o.content ?? []).map((c) => c.text ?? '').join('');
}

export interface InstantCompactionBenchOptions {
  /** Measured sessions (default INSTANT_COMPACTION_BENCH_SESSIONS or 100), after 3 warm-up ones. */
  readonly sessions?: number;
  /** The loopback's delay for the summarisation call (default INSTANT_COMPACTION_BENCH_LATENCY_MS or 50). */
  readonly latencyMs?: number;
}

export async function benchInstantCompaction(options: InstantCompactionBenchOptions = {}): Promise<BenchSection> {
  const sessions = Math.max(1, Math.floor(options.sessions ?? Number(process.env['INSTANT_COMPACTION_BENCH_SESSIONS'] ?? 100)) || 100);
  const latencyMs = options.latencyMs ?? Number(process.env['INSTANT_COMPACTION_BENCH_LATENCY_MS'] ?? 50);
  const loadStart = loadavg()[0] ?? Number.NaN;
  return await withChildren(async (track) => {
    // No latency for the set-up (agents' calls and writers); the summarisation call gets its delay per request.
    const rig = await startApiRig(track, { latencyMs: 0 });
    try {
      const timer = track(spawnBenchChild('./timed-post-child.ts', {}));
      await timer.next('ready', 120_000);

      // ---- set-up: sessions with a checkpoint, both threshold writers settled
      const setupStart = performance.now();
      const total = WARMUP_SESSIONS + sessions;
      const deadline = performance.now() + 900_000;
      const filled = await inPool(Array.from({ length: total }, (_, i) => 70_000 + i), FILL_CONCURRENCY, (seed) =>
        driveSession(rig, {
          api: 'openai-responses',
          sid: `cmp-${seed}`,
          plan: codingConversation({ seed, until: (usage) => usage >= SECOND_RUNG * 1.6 }).turns,
          writers: 2,
          thinkMs: 0,
          deadline,
          seed,
        }),
      );
      await writersIdle(rig);
      const setupSeconds = (performance.now() - setupStart) / 1000;
      const withCheckpoint: DrivenSession[] = [];
      for (const s of filled) {
        const status = await rig.client.status(s.sid);
        if (status.files.checkpoint.exists && status.state.watermark !== null) withCheckpoint.push(s);
      }
      if (withCheckpoint.length <= WARMUP_SESSIONS) throw new Error(`only ${withCheckpoint.length} of ${total} sessions have a checkpoint`);

      // ---- one compaction per session, the three paths in rotating order
      const times: Record<Path, Timed[]> = { gateway: [], loopback: [], 'loopback-0': [] };
      const statusMs: number[] = [];
      const rebuildMs: number[] = [];
      const bodyKB: number[] = [];
      const historyTokens: number[] = [];
      const summaryKB: number[] = [];
      const loopbackKB: number[] = [];
      let notFromCheckpoint = 0;
      for (const [i, s] of withCheckpoint.entries()) {
        if (!(s.agent instanceof ResponsesAgent)) throw new Error(`${s.sid}: not a Responses agent`);
        const agent = s.agent;
        const body = JSON.stringify({
          ...agent.params(),
          parallel_tool_calls: false,
          input: [...agent.input, { type: 'message', role: 'user', content: [{ type: 'input_text', text: CODEX_COMPACTION_PROMPT }] }],
          tools: [],
          stream: true,
        });
        const headers = (delay: number): Record<string, string> => ({
          'content-type': 'application/json',
          accept: 'text/event-stream',
          authorization: `Bearer sk-bench-${s.sid}`,
          'x-codex-turn-metadata': JSON.stringify({ session_id: s.sid, thread_id: s.sid, request_kind: 'compaction', compaction: { trigger: 'auto', reason: 'context_limit', implementation: 'responses', phase: 'pre_turn' } }),
          [SUMMARY_HEADER]: '1',
          [DELAY_HEADER]: String(delay),
        });
        const measured = i >= WARMUP_SESSIONS;
        for (const path of ORDERS[i % ORDERS.length] as readonly Path[]) {
          if (path === 'gateway') {
            const callsBefore = (await rig.stats()).calls;
            const opsFrom = rig.client.ops.length;
            const call = await post(timer, `${rig.gatewayOrigin}/s/${s.sid}/v1/responses`, headers(latencyMs), body);
            const upstreamCalls = (await rig.stats()).calls - callsBefore;
            const text = answerText(call.text);
            if (upstreamCalls !== 0 || !text.startsWith('## Checkpoint')) {
              notFromCheckpoint++;
              continue;
            }
            if (!measured) continue;
            times.gateway.push(call);
            const ops = rig.client.ops.slice(opsFrom).filter((o) => o.sessionId === s.sid);
            for (const o of ops) (o.op === 'status' ? statusMs : rebuildMs).push(o.ms);
            summaryKB.push(Buffer.byteLength(text) / 1024);
          } else {
            const call = await post(timer, `${rig.upstreamBaseURL}/responses`, headers(path === 'loopback' ? latencyMs : 0), body);
            const summary = answerText(call.text);
            if (!summary.startsWith('# Session checkpoint')) throw new Error(`${s.sid}: the loopback did not answer a summary`);
            if (!measured) continue;
            times[path].push(call);
            if (path === 'loopback') loopbackKB.push(Buffer.byteLength(summary) / 1024);
          }
        }
        if (measured) {
          bodyKB.push(Buffer.byteLength(body) / 1024);
          historyTokens.push(agent.lastUsage);
        }
      }

      const sorted = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);
      const totals = (path: Path): number[] => sorted(times[path].map((t) => t.total));
      const ttfbs = (path: Path): number[] => sorted(times[path].map((t) => t.ttfb));
      const g = totals('gateway');
      const l = totals('loopback');
      const z = totals('loopback-0');
      const p = (xs: readonly number[], q: number): number => round2(quantile(xs, q));
      const rows: BenchRow[] = [];
      rows.push({
        name: 'compaction sessions',
        value: g.length,
        unit: 'sessions',
        note:
          `Responses (Codex's requests), after ${WARMUP_SESSIONS} warm-up; ${withCheckpoint.length} of ${total} with a checkpoint; history ${Math.round(median(historyTokens))} tokens, request ${round1(median(bodyKB))} KB (medians); ` +
          `set up in ${round1(setupSeconds)} s; ${notFromCheckpoint === 0 ? 'every one answered from the checkpoint with no upstream call' : `${notFromCheckpoint} NOT answered from the checkpoint (left out)`}`,
      });
      rows.push({
        name: INSTANT_COMPACTION_ROWS.gatewayP50,
        value: p(g, 0.5),
        unit: 'ms',
        note: `first byte p50 ${p(ttfbs('gateway'), 0.5)} ms; answer (the checkpoint) ${round1(median(summaryKB))} KB; gateway, daemon and pool in one process, client in another`,
      });
      rows.push({ name: INSTANT_COMPACTION_ROWS.gatewayP99, value: p(g, 0.99), unit: 'ms', note: `max ${round2(g.at(-1) ?? Number.NaN)} ms` });
      rows.push({
        name: 'of which: daemon rebuild p50',
        value: p(sorted(rebuildMs), 0.5),
        unit: 'ms',
        note: `p99 ${p(sorted(rebuildMs), 0.99)} ms, reason compaction, rendered from the checkpoint; status before it p50 ${p(sorted(statusMs), 0.5)} ms (p99 ${p(sorted(statusMs), 0.99)})`,
      });
      rows.push({
        name: `loopback summarisation call (+${latencyMs} ms) p50`,
        value: p(l, 0.5),
        unit: 'ms',
        note: `p99 ${p(l, 0.99)} ms; first byte p50 ${p(ttfbs('loopback'), 0.5)} ms; the same request straight to the loopback, its summarisation call (extractive summary, ${round1(median(loopbackKB))} KB) after ${latencyMs} ms`,
      });
      rows.push({
        name: 'loopback summarisation call (no added latency) p50',
        value: p(z, 0.5),
        unit: 'ms',
        note: `p99 ${p(z, 0.99)} ms; first byte p50 ${p(ttfbs('loopback-0'), 0.5)} ms; the loopback's own work only (no model is this fast)`,
      });
      rows.push({
        name: INSTANT_COMPACTION_ROWS.ratio(latencyMs),
        value: round2(quantile(l, 0.5) / quantile(g, 0.5)),
        unit: '×',
        note: `p99 ratio ${round2(quantile(l, 0.99) / quantile(g, 0.99))}×; a real summarisation call generates the summary (thousands of tokens: seconds), so this understates the gain`,
      });
      rows.push({
        name: INSTANT_COMPACTION_ROWS.ratioZero,
        value: round2(quantile(z, 0.5) / quantile(g, 0.5)),
        unit: '×',
        note: `p99 ratio ${round2(quantile(z, 0.99) / quantile(g, 0.99))}×; above 1: faster than even a model that answers at once`,
      });
      rows.push({
        name: 'load average (1 min) at the end',
        value: round2(loadavg()[0] ?? Number.NaN),
        unit: '',
        note: `${round2(loadStart)} at the start; ${cpus().length} cores shared by the client, the loopback, the gateway process and anything else running`,
      });
      return { title: `Instant compaction: Codex's compaction answered from the checkpoint vs a summarisation call (${g.length} sessions)`, rows };
    } finally {
      await rig.close();
    }
  });
}

/**
 * Target lines for `bench/main.ts`: the answer within the bar the `gateway` section sets for the same daemon work (a
 * rebuild rendered from the checkpoint, p99 < 50 ms), and faster than the summarisation call it replaces. The ratio
 * against a loopback with no added latency is reported, not targeted: no model answers at once.
 */
export function instantCompactionTargets(section: BenchSection | undefined): SectionTarget[] {
  const value = (match: (name: string) => boolean): number | undefined => section?.rows.find((r) => match(r.name))?.value;
  return [
    { label: 'instant compaction: p99', value: value((n) => n === INSTANT_COMPACTION_ROWS.gatewayP99), unit: 'ms', target: '< 50', pass: (v) => v < 50 },
    {
      label: 'instant compaction: vs summarisation call with latency, p50',
      value: value((n) => n.startsWith('loopback summarisation (+')),
      unit: '×',
      target: '≥ 1',
      pass: (v) => v >= 1,
    },
  ];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const section = await benchInstantCompaction();
  printStandalone(section, (performance.now() - started) / 1000);
}
