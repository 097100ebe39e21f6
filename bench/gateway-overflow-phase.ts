/**
 * Phase 3 of the gateway bench (see `gateway.bench.ts`): overflow rewrite with an existing checkpoint. Sessions on a
 * small window are filled through the gateway, one call at a time, until the next call would overflow; then one call
 * per session past the window is timed through the gateway and, rewritten as the upstream got it, directly.
 */
import { performance } from 'node:perf_hooks';
import type { LmdbEventLog } from '@baton/runtime';
import type { BenchRow } from './bench-types.ts';
import { ask, median, quantile, round1, round2, sortedOf, type BenchChild } from './bench-process.ts';
import type { OverflowResult } from './gateway-agent-child.ts';
import type { TimedBatonClient, TimedOp } from './timed-baton-client.ts';

/** Model of the overflow phase: 37 036 − 4 629 (output) − 7 407 (compaction reserve) = a usable window of 25 000. */
export const SMALL_MODEL = 'gpt-4o';
export const SMALL_WINDOW = 37_036;
const USABLE_WINDOW = 25_000;
const OVERFLOW_WARMUP = 3;
/** Sessions filled at once. */
const FILL_CONCURRENCY = 4;
/** Size of each file the model reads. */
const OVERFLOW_FILE_BYTES = 4_000;
/** The row the rewrite target reads. */
export const REWRITE_P99_ROW = 'overflow rewrite cost p99';

export interface OverflowPhase {
  readonly agent: BenchChild;
  readonly upstream: BenchChild;
  readonly client: TimedBatonClient;
  readonly log: LmdbEventLog;
  /** Measured sessions (after the warm-up ones). */
  readonly overflowSessions: number;
}

const ms = (x: number): number => round2(x);


async function sleep(msDelay: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, msDelay));
}

export async function overflowPhase({ agent, upstream, client, log, overflowSessions }: OverflowPhase): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const total = OVERFLOW_WARMUP + overflowSessions;
  const ovfIds = Array.from({ length: total }, (_, i) => `ovf-${i}`);
  const setupStart = performance.now();
  // One call at a time per session, each sent once the daemon recorded the one before and the writer it started
  // (a rung it crossed) settled. Calls sent while a writer runs would leave the rungs they cross armed (a busy slot
  // fires none), to fire on the overflowing call's append: its rebuild would then wait for that writer, which is
  // another case than the one measured here.
  const fillCalls: number[] = [];
  let nextFill = 0;
  await Promise.all(
    Array.from({ length: FILL_CONCURRENCY }, async () => {
      while (nextFill < ovfIds.length) {
        const sid = ovfIds[nextFill++] as string;
        let calls = 0;
        for (;;) {
          agent.send({ type: 'fill-step', sid, model: SMALL_MODEL, fileBytes: OVERFLOW_FILE_BYTES, usableWindow: USABLE_WINDOW });
          const { called } = await agent.next(`fill-step:${sid}`, 120_000);
          if (called !== true) break;
          calls++;
          await callsRecorded(client, sid, calls);
          await writerIdle(client, sid);
        }
        fillCalls.push(calls);
      }
    }),
  );
  let checkpointRetries = 0;
  for (const sid of ovfIds) checkpointRetries += await settleWriters(client, sid);
  const setupSeconds = (performance.now() - setupStart) / 1000;
  for (const sid of ovfIds) {
    const status = await client.status(sid);
    if (status.state.usable_window !== USABLE_WINDOW) throw new Error(`${sid}: usable window ${status.state.usable_window}, expected ${USABLE_WINDOW}`);
    if (recordTypes(log, sid).includes('rebuild.requested')) throw new Error(`${sid}: the gateway rebuilt while the session was being filled`);
  }

  const gatewayTotals: number[] = [];
  const directTotals: number[] = [];
  const costs: number[] = [];
  const rebuildMs: number[] = [];
  const appendMs: number[] = [];
  const rest: number[] = [];
  const daemonMs: number[] = [];
  const agentKB: number[] = [];
  const sentKB: number[] = [];
  const boundaryChars: number[] = [];
  const renewed: number[] = [];
  let writerWaits = 0;
  for (const [i, sid] of ovfIds.entries()) {
    await writersIdle(client);
    const from = client.ops.length;
    const tag = `overflow-${sid}`;
    const viaGateway = await ask<OverflowResult>(agent, { type: 'overflow', sid, model: SMALL_MODEL, usableWindow: USABLE_WINDOW, tag });
    const ops = client.since(from).filter((o) => o.sessionId === sid);
    const { rawBody } = await ask<{ rawBody: string | null }>(upstream, { type: 'body', tag });
    if (rawBody === null) throw new Error(`${sid}: the upstream got no tagged call`);
    const sent = JSON.parse(rawBody) as { messages: { role: string; content?: unknown }[] };
    const boundary = sent.messages[1]?.content;
    if (typeof boundary !== 'string' || !boundary.startsWith('## Checkpoint')) throw new Error(`${sid}: the overflowing call was not rewritten onto a rebuilt context`);
    const types = recordTypes(log, sid);
    if (!types.includes('rebuild.rendered') || types.includes('rebuild.compacted')) throw new Error(`${sid}: the rebuild was not rendered from the checkpoint (${types.filter((t) => t.startsWith('rebuild')).join(', ')})`);
    // A writer settled (or the wait for one ran out) between the request and the render: the rebuild waited.
    const waitedForWriter = types.slice(types.indexOf('rebuild.requested'), types.indexOf('rebuild.rendered')).some((t) => t === 'writer.settled' || t === 'timer.fired');
    const direct = await ask<{ ttfb: number; total: number; renewed: number }>(agent, { type: 'direct', sid, body: rawBody });
    if (i < OVERFLOW_WARMUP) continue;
    if (waitedForWriter) writerWaits++;
    gatewayTotals.push(viaGateway.total);
    directTotals.push(direct.total);
    costs.push(viaGateway.total - direct.total);
    const rebuild = ops.find((o) => o.op === 'rebuild');
    const before = ops.filter((o: TimedOp) => o.op === 'append' && rebuild !== undefined && o.start < rebuild.start).at(-1);
    if (rebuild === undefined || before === undefined) throw new Error(`${sid}: the gateway made no append and rebuild for the overflowing call`);
    rebuildMs.push(rebuild.ms);
    appendMs.push(before.ms);
    // The gateway sends the rebuild right behind the append: together they take from the append's start to the
    // later of their ends.
    const daemon = Math.max(before.start + before.ms, rebuild.start + rebuild.ms) - before.start;
    daemonMs.push(daemon);
    rest.push(viaGateway.total - direct.total - daemon);
    agentKB.push(viaGateway.bodyBytes / 1024);
    sentKB.push(Buffer.byteLength(rawBody) / 1024);
    boundaryChars.push(boundary.length);
    renewed.push(direct.renewed);
  }
  const c = sortedOf(costs);
  const g = sortedOf(gatewayTotals);
  const d = sortedOf(directTotals);
  const rb = sortedOf(rebuildMs);
  rows.push({
    name: 'overflow sessions',
    value: overflowSessions,
    unit: 'sessions',
    note: `after ${OVERFLOW_WARMUP} warm-up; usable window ${USABLE_WINDOW}; ${median(fillCalls)} calls each to reach it; set up in ${round1(setupSeconds)} s${checkpointRetries > 0 ? `, ${checkpointRetries} checkpoint retries` : ''}`,
  });
  rows.push({ name: 'overflowing call through the gateway p50', value: ms(quantile(g, 0.5)), unit: 'ms', note: `p99 ${ms(quantile(g, 0.99))} ms; one at a time, no writer running` });
  rows.push({
    name: 'the rewritten request sent directly p50',
    value: ms(quantile(d, 0.5)),
    unit: 'ms',
    note: `p99 ${ms(quantile(d, 0.99))} ms; what the upstream got, sent straight after (${median(renewed)} messages new to the loopback kept new)`,
  });
  rows.push({ name: 'overflow rewrite cost p50', value: ms(quantile(c, 0.5)), unit: 'ms', note: 'per session: gateway total − direct total of the rewritten request' });
  rows.push({
    name: REWRITE_P99_ROW,
    value: ms(quantile(c, 0.99)),
    unit: 'ms',
    note: `max ${ms(c.at(-1) ?? Number.NaN)} ms; ${c.filter((x) => x >= 50).length} of ${c.length} at 50 ms or more; target < 50 ms`,
  });
  rows.push({
    name: 'overflowing calls whose rebuild waited for a writer',
    value: writerWaits,
    unit: 'calls',
    note: 'a writer the overflowing call started (a rung it fired) is awaited before rendering; counted in the figures above',
  });
  rows.push({
    name: 'of which: daemon, append and rebuild p50',
    value: ms(median(daemonMs)),
    unit: 'ms',
    note: `p99 ${ms(quantile(sortedOf(daemonMs), 0.99))} ms; from the append's start to the later answer (the rebuild is sent right behind the append)`,
  });
  rows.push({ name: 'daemon rebuild p50', value: ms(quantile(rb, 0.5)), unit: 'ms', note: `p99 ${ms(quantile(rb, 0.99))} ms; client.rebuild as the gateway awaited it (rendered from the checkpoint)` });
  rows.push({ name: 'append before the rebuild p50', value: ms(median(appendMs)), unit: 'ms', note: `p99 ${ms(quantile(sortedOf(appendMs), 0.99))} ms; the reply the agent echoed, recorded first` });
  rows.push({
    name: 'of which: the rest (gateway) p50',
    value: ms(median(rest)),
    unit: 'ms',
    note: 'rewrite cost − the daemon part above, per session: reading and parsing the agent body, digests, the rewrite, forwarding',
  });
  rows.push({
    name: 'agent request / rewritten request',
    value: round1(median(agentKB)),
    unit: 'KB',
    note: `rewritten ${round1(median(sentKB))} KB, boundary message ${round1(median(boundaryChars) / 1024)} KB (medians)`,
  });
  return rows;
}

function recordTypes(log: LmdbEventLog, sid: string): string[] {
  return [...log.read(`session/${sid}`)].map((r) => r.type);
}

/** Waits until no writer runs or waits anywhere (at most 2 minutes). */
async function writersIdle(client: TimedBatonClient): Promise<void> {
  const end = Date.now() + 120_000;
  for (;;) {
    const status = await client.runtimeStatus();
    if (status.writers.running === 0 && status.writers.queued === 0) return;
    if (Date.now() > end) throw new Error('writers still running after 2 minutes');
    await sleep(20);
  }
}

/** Waits until the gateway's recording appends of `sid` number at least `calls` (one per call it relayed). */
async function callsRecorded(client: TimedBatonClient, sid: string, calls: number): Promise<void> {
  const end = Date.now() + 60_000;
  while (client.ops.filter((o) => o.op === 'append' && o.sessionId === sid).length < calls) {
    if (Date.now() > end) throw new Error(`${sid}: the gateway recorded fewer than ${calls} calls within a minute`);
    await sleep(2);
  }
}

/** Waits until no writer runs in the session (at most 2 minutes). */
async function writerIdle(client: TimedBatonClient, sid: string): Promise<void> {
  const end = Date.now() + 120_000;
  while ((await client.status(sid)).state.writer !== 'idle') {
    if (Date.now() > end) throw new Error(`${sid}: writer still running after 2 minutes`);
    await sleep(20);
  }
}

/**
 * Waits until the session's writer slot is idle with a checkpoint committed (a watermark); a writer that did not
 * succeed is asked again (up to 3 times). Returns how many times it asked.
 */
async function settleWriters(client: TimedBatonClient, sid: string): Promise<number> {
  const end = Date.now() + 180_000;
  let asked = 0;
  for (;;) {
    const status = await client.status(sid);
    if (status.state.writer === 'idle') {
      if (status.state.watermark !== null) return asked;
      if (asked >= 3) throw new Error(`${sid}: no checkpoint after ${asked} manual checkpoints (${JSON.stringify(status.last_outcome)})`);
      asked++;
      await client.checkpoint(sid);
    }
    if (Date.now() > end) throw new Error(`${sid}: writer not idle after 3 minutes`);
    await sleep(20);
  }
}

