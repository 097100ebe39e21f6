/**
 * What the `writers-api` and `instant-compaction` sections run on: the loopback upstream in its own process
 * (`api-upstream-child.ts`), and in this process the daemon (in-process `MemoryBus`, LMDB log, a pool of 2, its OpenAI
 * and Anthropic endpoints both on the loopback) and the gateway recording into it — what `baton up` runs. Plus the
 * driver of one session: a coding agent (`api-agents.ts`) sending its planned turns through the gateway until the
 * session's threshold writers have run, with each writer's figures read from the session's events.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BatonClient, MemoryBus, type CallOptions } from '@baton/client';
import { BatonGateway } from '@baton/gateway';
import type { ProviderApi, PublishedEvent, RebuildReply, RebuildRequest, StatusReply } from '@baton/protocol';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import type { LoopbackStats } from '@baton/testing';
import { createAgent, type BenchAgent } from './api-agents.ts';
import type { ApiUpstreamConfig } from './api-upstream-child.ts';
import { spawnBenchChild, type BenchChild } from './bench-process.ts';
import { prng, type Turn } from './coding-conversation.ts';
import { WriterRecords, type WriterRecord } from './writer-records.ts';

/** The section's provider APIs, in the order they run. */
export const APIS: readonly ProviderApi[] = ['openai-chat', 'openai-responses', 'anthropic-messages'];

/** Model ids per API. */
export const MODELS: Readonly<Record<ProviderApi, string>> = { 'openai-chat': 'gpt-4o', 'openai-responses': 'gpt-5.5', 'anthropic-messages': 'claude-sonnet-4-5' };

/**
 * The window the gateway opens every session with: 71 109 − 8 888 (output, 12.5 %) − 14 221 (compaction reserve, 20 %) =
 * a usable window of 48 000, rungs 9 600 / 19 200 / 28 800 / 35 000 — those of the `writers` section's sessions.
 */
export const CONTEXT_WINDOW = 71_109;
export const FIRST_RUNG = 9_600;
export const SECOND_RUNG = 19_200;

/** Tail small enough that a ~10 000-token conversation leaves most of itself to the writer (as in `writers`). */
const TAIL = { minTokens: 1_500, maxTokens: 4_000, minTextMessages: 3 };

/** A `BatonClient` that notes how long each `status` and `rebuild` call takes, per session. */
export class OpTimedClient extends BatonClient {
  readonly ops: { readonly op: 'status' | 'rebuild'; readonly sessionId: string; readonly ms: number }[] = [];

  override async status(sessionId: string, options?: CallOptions): Promise<StatusReply> {
    const start = performance.now();
    const reply = await super.status(sessionId, options);
    this.ops.push({ op: 'status', sessionId, ms: performance.now() - start });
    return reply;
  }

  override async rebuild(sessionId: string, req: RebuildRequest, options?: CallOptions): Promise<RebuildReply> {
    const start = performance.now();
    const reply = await super.rebuild(sessionId, req, options);
    this.ops.push({ op: 'rebuild', sessionId, ms: performance.now() - start });
    return reply;
  }
}

export interface ApiRig {
  readonly upstream: BenchChild;
  /** The loopback's `…/v1` base URL (OpenAI clients) and its origin (the Anthropic client's base URL). */
  readonly upstreamBaseURL: string;
  readonly log: LmdbEventLog;
  readonly client: OpTimedClient;
  readonly gateway: BatonGateway;
  /** The gateway's `http://host:port`. */
  readonly gatewayOrigin: string;
  /** Daemon and gateway warnings and errors, by message. */
  readonly problems: Map<string, number>;
  /** The loopback's usage totals so far. */
  stats(): Promise<LoopbackStats>;
  close(): Promise<void>;
}

/** Starts the loopback child (tracked, so it is killed if the section fails), the daemon and the gateway. */
export async function startApiRig(track: (child: BenchChild) => BenchChild, options: { latencyMs: number; poolSize?: number }): Promise<ApiRig> {
  const upstream = track(spawnBenchChild('./api-upstream-child.ts', { latencyMs: options.latencyMs } satisfies ApiUpstreamConfig));
  const ready = await upstream.next('ready', 120_000);
  const upstreamBaseURL = String(ready['baseURL']);
  const upstreamOrigin = String(ready['url']);
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-api-bench-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const bus = new MemoryBus();
  const daemonTransport = bus.connect();
  const clientTransport = bus.connect();
  const problems = new Map<string, number>();
  const note = (level: string, msg: string): void => {
    if (level === 'warn' || level === 'error') problems.set(`${level}: ${msg}`, (problems.get(`${level}: ${msg}`) ?? 0) + 1);
  };
  const daemon = BatonDaemon.start({
    transport: daemonTransport,
    log,
    dataDir,
    poolSize: options.poolSize ?? 2,
    // Writers call the loopback with the SDKs' default retries, as `baton up` does.
    model: { baseURL: upstreamBaseURL, apiKey: 'bench-writer-key', timeoutMs: 120_000 },
    anthropic: { baseURL: upstreamOrigin, apiKey: 'bench-writer-key', timeoutMs: 120_000 },
    tail: TAIL,
    logger: note,
  });
  const client = new OpTimedClient(clientTransport, { timeoutMs: 300_000 });
  const windows = Object.fromEntries(Object.values(MODELS).map((id) => [id, CONTEXT_WINDOW]));
  const gateway = await BatonGateway.start({ upstream: upstreamBaseURL, client, contextWindows: windows, logger: note });
  return {
    upstream,
    upstreamBaseURL,
    log,
    client,
    gateway,
    gatewayOrigin: gateway.baseURL.replace(/\/v1$/, ''),
    problems,
    stats: async () => {
      upstream.send({ type: 'stats' });
      return (await upstream.next('stats', 60_000)) as unknown as LoopbackStats;
    },
    close: async () => {
      await gateway.close();
      await daemon.stop();
      await clientTransport.close();
      await daemonTransport.close();
      await log.close();
      await upstream.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// one session

export interface DrivenSession {
  readonly api: ProviderApi;
  readonly sid: string;
  readonly agent: BenchAgent;
  /** In the order they started. */
  readonly writers: WriterRecord[];
  /** Whether every writer asked for settled before the deadline. */
  readonly settled: boolean;
}

export interface DriveOptions {
  readonly api: ProviderApi;
  readonly sid: string;
  readonly plan: readonly Turn[];
  /** Threshold writers to wait for: 1 (the first rung) or 2 (the first and second). */
  readonly writers: 1 | 2;
  /** Mean pause between turns (the agent's own work), jittered ± 50 %; 0 for none. */
  readonly thinkMs: number;
  /** `performance.now()` after which the session stops waiting. */
  readonly deadline: number;
  readonly seed: number;
}

/**
 * Runs a session through the gateway: its agent sends the planned turns one after the other (a pause between turns)
 * and keeps working while writer 1 runs; once its usage nears the second rung it waits for writer 1 to settle (a rung
 * crossed while a writer runs stays armed until an append after it settled), then goes on until writer 2 started.
 * Resolves once the writers asked for settled (or at the deadline). The session's events are read from before its
 * first call, so no writer is missed.
 */
export async function driveSession(rig: ApiRig, options: DriveOptions): Promise<DrivenSession> {
  const { api, sid } = options;
  const agent = createAgent(api, {
    gatewayOrigin: rig.gatewayOrigin,
    sid,
    model: MODELS[api],
    apiKey: `sk-bench-${sid}`,
    // One project per session: its writers share no MEMORY.md with other sessions' writers.
    headers: { 'x-baton-project': `p-${sid}` },
  });
  const records = new WriterRecords();
  const waiters = new Map<number, () => void>();
  const stream = rig.client.events(sid);
  const reading = (async () => {
    for await (const e of stream as AsyncIterable<PublishedEvent>) {
      records.note(e);
      if (e.type === 'writer.settled') waiters.get(records.settled)?.();
    }
  })();
  /** Resolves true when `n` writers have settled, false at the deadline. */
  const settledWriters = (n: number): Promise<boolean> =>
    records.settled >= n
      ? Promise.resolve(true)
      : new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), Math.max(0, options.deadline - performance.now()));
          waiters.set(n, () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
  const think = prng(options.seed + 7);
  try {
    for (const turn of options.plan) {
      if (records.started >= options.writers || performance.now() > options.deadline) break;
      if (options.writers === 2 && records.started >= 1 && records.settled < 1 && agent.lastUsage >= SECOND_RUNG * 0.8) await settledWriters(1);
      await agent.turn(turn);
      if (options.thinkMs > 0) await new Promise((resolve) => setTimeout(resolve, options.thinkMs / 2 + think(options.thinkMs)));
    }
    const done = await settledWriters(options.writers);
    return { api, sid, agent, writers: records.list, settled: done };
  } finally {
    stream.stop();
    await reading;
  }
}
