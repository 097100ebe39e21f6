/**
 * Writers benchmark: many sessions each driving two fork-mode checkpoint writers against the loopback model
 * (extractive mode, 50 ms latency), side by side at daemon pool sizes 1 and 2 in the same run (one after the other,
 * after a small warm-up). Each pool size gets its own `BatonDaemon` on an in-process `MemoryTransport`, its own
 * `LmdbEventLog` in a temporary directory and its own loopback model, which runs in a worker thread (see
 * `startLoopbackWorker`), so its simulated prefix cache and token memo start cold for both.
 *
 * Each session opens with the agent's system prompt, tools and `writer_tools` (fork mode), then appends a coding
 * conversation one turn at a time (user → read_file/bash call → a 3–5 KB TypeScript file or test output → answer,
 * ~100 ms between turns), its provider usage being the real o200k count of everything sent so far. The usage
 * crosses the first rung (writer 1) and the agent goes on; the turn crossing the second rung is sent once writer 1
 * settled (a rung crossed while a writer runs stays armed until the next append), so it starts writer 2. The session
 * is done when both writers settled (`writer.settled` events).
 *
 * Figures per pool size, over the window from the first `writer.started` to the last `writer.settled`: writers/s,
 * the CPU used (main thread, loopback thread, the rest of the process), the main thread's event-loop delay
 * (`monitorEventLoopDelay`, resolution 10 ms: a sample is the timer interval plus the delay, so an idle loop reads
 * ≈ 10 ms; the rows report the delay beyond the interval), and the second writer's cache hit rate as the loopback's simulated prefix cache reports it
 * (`writer.cache_perf`: cached / prompt tokens over the writer's calls; its first call, from the writer's log).
 *
 * Standalone: `npx tsx bench/writers.bench.ts` (env: WRITERS_BENCH_SESSIONS, default 200).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer';
import { BatonClient, BatonDaemon, LmdbEventLog, MemoryBus, toProviderMessage, type Message, type OpenRequest, type SessionEvent } from '@baton/runtime';
import type { LoopbackModelOptions, LoopbackStats } from '@baton/runtime/testing';
import type { BenchRow, BenchSection } from './bench-types.ts';

// ---------------------------------------------------------------------------------------------------------------
// the agent (shapes copied from test/support/conversation.ts)

export const AGENT_TOOLS = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Write a file.',
      parameters: { type: 'object', properties: { file_path: { type: 'string' }, text: { type: 'string' } }, required: ['file_path', 'text'] },
    },
  },
  {
    type: 'function',
    function: { name: 'bash', description: 'Run a command.', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
  },
];

export const WRITER_TOOLS = {
  read: { name: 'read_file', args: { path: 'file_path' } },
  write: { name: 'write_file', args: { path: 'file_path', content: 'text' } },
};

export const SYSTEM_PROMPT = 'You are a careful coding agent working in a TypeScript repository.';

/** 64 000-token model with 8 000 output tokens: usable window 48 000, rungs 9 600 / 19 200 / 28 800 / 35 000. */
const MODEL = { id: 'gpt-4o', context_window: 64_000, max_output_tokens: 8_000 };
const SECOND_RUNG = 19_200;

/** Tail small enough that a ~10 000-token conversation leaves most of itself to the writer. */
const TAIL = { minTokens: 1_500, maxTokens: 4_000, minTextMessages: 3 };

/** Mean pause between an agent's turns (its own model call), jittered ± 50 %. */
const THINK_MS = 100;

// ---------------------------------------------------------------------------------------------------------------
// a realistic conversation

/** Deterministic PRNG (LCG): `next(n)` in [0, n). */
function prng(seed: number): (n: number) => number {
  let x = (seed * 2654435761) >>> 0 || 1;
  return (n) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
}

const NOUNS = ['order', 'invoice', 'customer', 'refund', 'payment', 'cart', 'shipment', 'ledger', 'coupon', 'stock', 'price', 'account'];
const VERBS = ['create', 'update', 'load', 'validate', 'apply', 'cancel', 'reserve', 'compute', 'merge', 'settle', 'resolve', 'sync'];
const TYPES = ['string', 'number', 'boolean', 'Date', 'readonly string[]', 'Money', 'OrderLine[]', 'Record<string, number>'];
const MODULES = ['../db/pool.ts', '../lib/money.ts', '../lib/errors.ts', './repository.ts', '../http/router.ts', '../lib/clock.ts', 'zod', 'node:crypto'];

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** A TypeScript module of about `bytes` bytes: imports, interfaces, functions with bodies, unique to `seed`. */
function codeFile(seed: number, bytes: number): string {
  const next = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[next(xs.length)] as T;
  const ident = (): string => `${pick(VERBS)}${cap(pick(NOUNS))}${next(2) === 0 ? cap(pick(NOUNS)) : ''}${next(100)}`;
  const parts: string[] = [];
  for (let i = 0, n = 3 + next(4); i < n; i++) parts.push(`import { ${ident()}, ${ident()} } from '${pick(MODULES)}';`);
  parts.push('');
  let size = parts.join('\n').length;
  while (size < bytes) {
    let chunk: string;
    if (next(3) === 0) {
      const name = `${cap(pick(NOUNS))}${cap(pick(NOUNS))}${next(1000)}`;
      const fields = Array.from({ length: 3 + next(6) }, () => `  readonly ${pick(NOUNS)}${cap(pick(NOUNS))}${next(2) === 0 ? '?' : ''}: ${pick(TYPES)};`);
      chunk = `/** ${cap(pick(NOUNS))} as stored by the ${pick(NOUNS)} service (${next(50)} fields before migration ${next(900)}). */\nexport interface ${name} {\n${fields.join('\n')}\n}\n`;
    } else {
      const fn = ident();
      const a = pick(NOUNS);
      const b = pick(NOUNS);
      const lines = [
        `export async function ${fn}(${a}: ${cap(a)}, ${b}Id: string, options: { retries?: number } = {}): Promise<${cap(b)} | null> {`,
        `  const row = await db.query<${cap(b)}Row>('SELECT * FROM ${b}s WHERE id = $1 AND ${a}_id = $2', [${b}Id, ${a}.id]);`,
        `  if (row === undefined) throw new NotFoundError(\`${b} \${${b}Id} not found for ${a} \${${a}.id}\`);`,
        `  const total = row.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, ${next(100)});`,
        `  if (total > ${1000 + next(90_000)} && (options.retries ?? ${next(5)}) > 0) {`,
        `    logger.warn({ ${a}: ${a}.id, ${b}: ${b}Id, total }, '${pick(VERBS)} ${b}: total above the limit');`,
        `    return await ${ident()}(${a}, ${b}Id, { retries: (options.retries ?? 1) - 1 });`,
        '  }',
        `  return { ...row, total: Math.round(total * 100) / 100, ${pick(NOUNS)}At: clock.now() } satisfies ${cap(b)};`,
        '}',
        '',
      ];
      chunk = lines.join('\n');
    }
    parts.push(chunk);
    size += chunk.length + 1;
  }
  return parts.join('\n');
}

/** Output of a failing test run (a bash tool result). */
function testOutput(seed: number, bytes: number): string {
  const next = prng(seed);
  const lines = [`> vitest run test/${NOUNS[next(NOUNS.length)]}.test.ts`, ''];
  let size = 0;
  while (size < bytes) {
    const noun = NOUNS[next(NOUNS.length)] as string;
    const line =
      next(4) === 0
        ? ` FAIL  test/${noun}.test.ts > ${VERBS[next(VERBS.length)]} ${noun} > rejects a ${noun} of ${next(1000)}\nAssertionError: expected ${next(10_000)} to be ${next(10_000)} // Object.is equality\n    at test/${noun}.test.ts:${next(400)}:${next(60)}`
        : ` ✓ test/${noun}.test.ts > ${VERBS[next(VERBS.length)]} ${noun} ${next(100)} (${next(300)} ms)`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push('', ` Test Files  ${1 + next(4)} failed | ${next(40)} passed`, `      Tests  ${1 + next(9)} failed | ${next(400)} passed`);
  return lines.join('\n');
}

/** One agent turn: user → tool call → tool result → answer, the two assistant messages carrying their usage. */
export type Turn = [Message, Message, Message, Message];

export interface CodingConversation {
  readonly turns: Turn[];
  /** Provider usage (prompt + completion) after each turn. */
  readonly usageAfter: number[];
  readonly tokens: number;
  readonly bytes: number;
}

export interface CodingConversationOptions {
  /** Seed of the text and of the message ids (`s<seed>t<turn>…`). */
  readonly seed: number;
  /** Stops after the turn for which this returns true (given the usage so far and the turn index). */
  readonly until: (usage: number, turn: number) => boolean;
  /** Size of a read_file result: `[min, max)` bytes of TypeScript (bash results are about half). */
  readonly codeBytes?: readonly [number, number];
}

/**
 * A coding conversation (user asks → read_file or bash → a TypeScript file or test output → answer). Usage is the
 * real o200k count of what the agent sent (system + tools + messages) plus the reply, so it crosses rungs where a
 * provider would. Deterministic and unique to `seed`.
 */
export function codingConversation(options: CodingConversationOptions): CodingConversation {
  const { seed } = options;
  const [minCode, maxCode] = options.codeBytes ?? [3_000, 5_000];
  const next = prng(seed);
  let sent = countTokens(SYSTEM_PROMPT) + countTokens(JSON.stringify(AGENT_TOOLS));
  let bytes = 0;
  const turns: Turn[] = [];
  const usageAfter: number[] = [];
  const measure = (m: Message): number => {
    const text = (typeof m.content === 'string' ? m.content : '') + (m.tool_calls ? JSON.stringify(m.tool_calls) : '');
    bytes += text.length;
    return countTokens(text) + 4;
  };
  for (let turn = 0; ; turn++) {
    const p = `s${seed}t${turn}`;
    const noun = NOUNS[next(NOUNS.length)] as string;
    const file = `src/${noun}s/${VERBS[next(VERBS.length)]}-${noun}-${turn}.ts`;
    const bash = turn % 3 === 2;
    const user: Message = {
      id: `${p}u`,
      role: 'user',
      content:
        turn === 0
          ? `The ${noun} endpoint returns a 500 when the ${NOUNS[next(NOUNS.length)]} is empty (session ${seed}). Find the cause in ${file}, fix it and keep the API on port ${8000 + next(1000)}.`
          : `Good. Next, look at ${file}: ${VERBS[next(VERBS.length)]} must not ${VERBS[next(VERBS.length)]} the ${noun} twice. Run the tests after the change.`,
    };
    const callArgs = bash ? { command: `npx vitest run test/${noun}.test.ts` } : { file_path: file };
    const call: Message = {
      id: `${p}a`,
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `${p}c`, type: 'function', function: { name: bash ? 'bash' : 'read_file', arguments: JSON.stringify(callArgs) } }],
      finish_reason: 'tool_calls',
    };
    const size = minCode + next(Math.max(1, maxCode - minCode));
    const result: Message = {
      id: `${p}r`,
      role: 'tool',
      tool_call_id: `${p}c`,
      content: bash ? testOutput(seed * 1000 + turn, size >> 1) : codeFile(seed * 1000 + turn, size),
    };
    const answer: Message = {
      id: `${p}b`,
      role: 'assistant',
      content: `I changed ${file}: the ${noun} was ${VERBS[next(VERBS.length)]}d before the lock was taken, so a retry could ${VERBS[next(VERBS.length)]} it twice. We decided to keep the ${NOUNS[next(NOUNS.length)]} cache and add a guard; ${next(40)} tests pass now.`,
      finish_reason: 'stop',
    };
    sent += measure(user);
    const callTokens = measure(call);
    call.usage = { prompt_tokens: sent, completion_tokens: callTokens };
    sent += callTokens + measure(result);
    const answerTokens = measure(answer);
    answer.usage = { prompt_tokens: sent, completion_tokens: answerTokens };
    sent += answerTokens;
    turns.push([user, call, result, answer]);
    usageAfter.push(sent);
    if (options.until(sent, turn)) return { turns, usageAfter, tokens: sent, bytes };
  }
}

interface PlannedSession {
  /** Appends, one per turn; writer 1 starts on the turn crossing the first rung, writer 2 on the last one. */
  readonly appends: Message[][];
  readonly tokens: number;
  readonly bytes: number;
}

/** A session whose usage crosses the first rung, then (on its last turn) the second. */
function planSession(seed: number): PlannedSession {
  const c = codingConversation({ seed, until: (usage) => usage >= SECOND_RUNG });
  return { appends: c.turns, tokens: c.tokens, bytes: c.bytes };
}

/** CPU time of the calling thread in ms, from Linux `/proc/thread-self/stat`; undefined elsewhere. */
function threadCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** CPU time of the whole process (every thread) in ms. */
function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

// ---------------------------------------------------------------------------------------------------------------
// the loopback model, in its own thread

/**
 * `startLoopbackModel` from `@baton/runtime/testing`, run in a worker thread. In this thread, the fake provider's
 * own work (parsing ~60 KB request bodies, hashing and tokenising every prompt piece for its simulated prefix cache)
 * took ~45 % of the main thread's busy time and set its event-loop delay; a real provider runs elsewhere, so it is
 * kept out of the thread whose delay is measured. It still shares the two cores with the daemon's workers.
 */
interface LoopbackHandle {
  readonly baseURL: string;
  /** Sends the agent's own chat request to the loopback from its thread (warms the simulated prefix cache). */
  agentCall(body: Record<string, unknown>): Promise<void>;
  stats(): Promise<LoopbackStats>;
  /** CPU time of the loopback's thread in ms (Linux), else null. */
  cpu(): Promise<number | null>;
  close(): Promise<void>;
}

const LOOPBACK_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.tsx)
  .then(({ register }) => { register(); return import(workerData.module); })
  .then(async ({ startLoopbackModel }) => {
    const model = await startLoopbackModel(workerData.options);
    const { readFileSync } = require('node:fs');
    const cpuMs = () => {
      try {
        const stat = readFileSync('/proc/thread-self/stat', 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        return null;
      }
    };
    parentPort.on('message', async (msg) => {
      if (msg !== null && typeof msg === 'object' && 'agentCall' in msg) {
        // The agent's own request, serialised and sent from this thread so the daemon's main thread only pays a
        // structured clone.
        await fetch(model.baseURL + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(msg.agentCall.body) })
          .then((r) => r.arrayBuffer())
          .catch(() => undefined);
        parentPort.postMessage({ agentDone: msg.agentCall.id });
        return;
      }
      if (msg === 'stats') parentPort.postMessage({ stats: model.stats() });
      if (msg === 'cpu') parentPort.postMessage({ cpu: cpuMs() });
      if (msg === 'close') {
        await model.close();
        parentPort.postMessage({ closed: true });
        parentPort.close();
      }
    });
    parentPort.postMessage({ baseURL: model.baseURL });
  });
`;

async function startLoopbackWorker(options: LoopbackModelOptions): Promise<LoopbackHandle> {
  const worker = new Worker(LOOPBACK_WORKER, {
    eval: true,
    workerData: { tsx: import.meta.resolve('tsx/esm/api'), module: import.meta.resolve('@baton/runtime/testing'), options },
  });
  const next = <T>(key: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (msg: Record<string, unknown>): void => {
        if (!(key in msg)) return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve(msg[key] as T);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
  const baseURL = await next<string>('baseURL');
  const calls = new Map<number, () => void>();
  let callId = 0;
  worker.on('message', (msg: Record<string, unknown>) => {
    if (typeof msg['agentDone'] !== 'number') return;
    calls.get(msg['agentDone'])?.();
    calls.delete(msg['agentDone']);
  });
  return {
    baseURL,
    agentCall: (body) =>
      new Promise<void>((resolve) => {
        const id = ++callId;
        calls.set(id, resolve);
        worker.postMessage({ agentCall: { id, body } });
      }),
    stats: () => {
      const reply = next<LoopbackStats>('stats');
      worker.postMessage('stats');
      return reply;
    },
    cpu: () => {
      const reply = next<number | null>('cpu');
      worker.postMessage('cpu');
      return reply;
    },
    close: async () => {
      const closed = next<boolean>('closed');
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// one pool size

interface WriterRecord {
  readonly writerId: string;
  trigger: string;
  mode: string;
  outcome: string | null;
  hitRate: number | null;
  prompt: number;
  cached: number;
  calls: number;
}

export interface PoolRun {
  readonly pool: number;
  readonly sessions: number;
  readonly writers: number;
  readonly succeeded: number;
  readonly seconds: number;
  readonly writersPerSecond: number;
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  /** Event-loop utilisation of the main thread over the same window (0–1). */
  readonly mainBusy: number;
  /** CPU used over the same window, in cores (Linux only, NaN elsewhere). */
  readonly cores: { readonly main: number; readonly loopback: number; readonly rest: number };
  /** Second writer of each session, from `writer.cache_perf`. */
  readonly secondRates: number[];
  readonly secondCached: number;
  /** Second writer's first model call: cached / prompt tokens. */
  readonly secondFirstCallRates: number[];
  readonly secondPrompt: number;
  readonly firstRates: number[];
  readonly forkWriters: number;
  readonly modelCalls: number;
  readonly tokensPerSession: number;
  readonly kibPerSession: number;
  readonly problems: string;
}

/** Sampling interval of the event-loop delay histogram; its samples include it. */
const ELD_RESOLUTION_MS = 10;

async function runPool(pool: number, sessions: number, seedBase: number, timeoutMs: number): Promise<PoolRun> {
  const plans = Array.from({ length: sessions }, (_, i) => planSession(seedBase + i));
  const loopback = await startLoopbackWorker({ mode: 'extractive', latencyMs: 50 });
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-writers-bench-'));
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  const bus = new MemoryBus();
  // Writer failures and daemon warnings, by kind / message (reported in the row note).
  const problems = new Map<string, number>();
  const daemonTransport = bus.connect();
  const clientTransport = bus.connect();
  const daemon = BatonDaemon.start({
    transport: daemonTransport,
    log,
    dataDir,
    poolSize: pool,
    model: { baseURL: loopback.baseURL, apiKey: 'bench' },
    tail: TAIL,
    logger: (level, msg) => {
      if (level === 'warn' || level === 'error') problems.set(`${level}: ${msg}`, (problems.get(`${level}: ${msg}`) ?? 0) + 1);
    },
  });
  const client = new BatonClient(clientTransport, { timeoutMs: 120_000 });
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  try {
    const open: OpenRequest = { project_id: 'shop', model: MODEL, system: SYSTEM_PROMPT, tools: AGENT_TOOLS, writer_tools: WRITER_TOOLS };
    const ids = await Promise.all(plans.map(async () => (await client.open(open)).session_id));
    const writers = ids.map(() => new Map<string, WriterRecord>());
    let settledTotal = 0;
    let lastSettledAt = 0;
    let firstStartedAt = 0;
    let elu = performance.eventLoopUtilization();
    let cpuAtStart: { main: number | undefined; process: number; loopback: Promise<number | null> } | undefined;
    const record = (i: number, id: string): WriterRecord => {
      const map = writers[i] as Map<string, WriterRecord>;
      let w = map.get(id);
      if (w === undefined) {
        w = { writerId: id, trigger: '', mode: '', outcome: null, hitRate: null, prompt: 0, cached: 0, calls: 0 };
        map.set(id, w);
      }
      return w;
    };
    // Per session: a waiter per settlement count, fed by the session's event stream (subscribed before the first
    // append, so no event is missed).
    const settledCount = ids.map(() => 0);
    const waiters = ids.map(() => new Map<number, () => void>());
    const streams = ids.map((sid, i) => {
      const stream = client.events(sid);
      void (async () => {
        for await (const e of stream as AsyncIterable<SessionEvent>) {
          if (e.type === 'writer.started') {
            Object.assign(record(i, e.writer_id), { trigger: e.trigger, mode: e.mode });
            if (firstStartedAt === 0) {
              // The measurement window opens with the first writer.
              firstStartedAt = performance.now();
              elu = performance.eventLoopUtilization();
              cpuAtStart = { main: threadCpuMs(), process: processCpuMs(), loopback: loopback.cpu() };
              eld.enable();
            }
          } else if (e.type === 'writer.cache_perf') {
            Object.assign(record(i, e.writer_id), { hitRate: e.cache_hit_rate, prompt: e.total_input_tokens, cached: e.cache_read_tokens, calls: e.num_llm_calls });
          } else if (e.type === 'writer.settled') {
            const w = record(i, e.writer_id);
            w.outcome = e.outcome;
            settledTotal++;
            lastSettledAt = performance.now();
            const n = (settledCount[i] = (settledCount[i] ?? 0) + 1);
            waiters[i]?.get(n)?.();
          }
        }
      })();
      return stream;
    });
    const deadline = performance.now() + timeoutMs;
    /** Resolves when session `i` has `n` settled writers (or at the deadline). */
    const settledWriters = (i: number, n: number): Promise<void> =>
      (settledCount[i] ?? 0) >= n
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
            waiters[i]?.set(n, () => {
              clearTimeout(timer);
              resolve();
            });
          });

    await Promise.all(
      plans.map(async (plan, i) => {
        const sid = ids[i] as string;
        const think = prng(i + 7);
        // The agent's own model call between turns, to the same (loopback) provider: it is what warms the provider's
        // prefix cache for the writer's fork-mode requests in real use. Then a think time (THINK_MS ± 50 %), so 200
        // agents are not in lock-step.
        const history: Message[] = [];
        const pause = async (batch: readonly Message[]): Promise<void> => {
          history.push(...batch);
          await loopback.agentCall({ model: MODEL.id, messages: [{ role: 'system', content: SYSTEM_PROMPT }, ...history.map(toProviderMessage)], tools: AGENT_TOOLS });
          await new Promise((resolve) => setTimeout(resolve, THINK_MS / 2 + think(THINK_MS)));
        };
        // Writer 1 starts on the turn crossing the first rung; the agent keeps working while it runs. A rung crossed
        // while a writer runs stays armed until an append after its settlement, so the turn that crosses the second
        // rung is sent once writer 1 settled.
        const last = plan.appends.length - 1;
        for (const batch of plan.appends.slice(0, last)) {
          await client.append(sid, batch);
          await pause(batch);
        }
        await settledWriters(i, 1);
        await client.append(sid, plan.appends[last] as Message[]);
        await settledWriters(i, 2);
      }),
    );
    eld.disable();
    const mainBusy = performance.eventLoopUtilization(elu).utilization;
    const windowMs = (lastSettledAt > 0 ? lastSettledAt : performance.now()) - firstStartedAt;
    // CPU used over the window, in cores: the main thread, the loopback's thread, and the rest of the process (the
    // pool's workers, GC and I/O threads).
    const cores = { main: Number.NaN, loopback: Number.NaN, rest: Number.NaN };
    if (cpuAtStart !== undefined && windowMs > 0) {
      const [mainEnd, processEnd, loopEnd, loopStart] = [threadCpuMs(), processCpuMs(), await loopback.cpu(), await cpuAtStart.loopback];
      const main = mainEnd !== undefined && cpuAtStart.main !== undefined ? mainEnd - cpuAtStart.main : Number.NaN;
      const loop = loopEnd !== null && loopStart !== null ? loopEnd - loopStart : Number.NaN;
      cores.main = main / windowMs;
      cores.loopback = loop / windowMs;
      cores.rest = (processEnd - cpuAtStart.process - main - loop) / windowMs;
    }
    const ordered = writers.map((map) => [...map.values()]);
    // Why writers did not succeed, from their own logs (the last `*failed` record; paths and hashes shortened).
    const shorten = (text: string): string =>
      text
        .replace(/'?\/[^\s']+'?/g, (path) => {
          const area = /\/(history|staging|memory)\//.exec(path)?.[1];
          return area === undefined ? '…' : `…/${area}/…`;
        })
        .slice(0, 100);
    for (const w of ordered.flat()) {
      if (w.outcome === 'success') continue;
      const failed = [...log.read(`writer/${w.writerId}`)].reverse().find((r) => r.type.endsWith('failed'));
      const message = String((failed?.payload as { message?: unknown; reason?: unknown } | undefined)?.message ?? (failed?.payload as { reason?: unknown } | undefined)?.reason ?? '');
      const key = `${w.outcome ?? 'unsettled'}${failed !== undefined ? ` at ${failed.type}: ${shorten(message)}` : ''}`;
      problems.set(key, (problems.get(key) ?? 0) + 1);
    }
    // The second writer's first model call, from its own log (`model.replied` usage): the request that shares the
    // first writer's prefix up to that writer's boundary and adds the turns since.
    const secondFirstCallRates = ordered.flatMap((list) => {
      const w = list[1];
      if (w === undefined) return [];
      const replied = [...log.read(`writer/${w.writerId}`)].find((r) => r.type === 'model.replied');
      const usage = (replied?.payload as { usage?: { prompt: number; cached: number } } | undefined)?.usage;
      return usage !== undefined && usage.prompt > 0 ? [usage.cached / usage.prompt] : [];
    });
    const all = ordered.flat();
    const second = ordered.flatMap((list) => (list[1] !== undefined ? [list[1]] : []));
    const first = ordered.flatMap((list) => (list[0] !== undefined ? [list[0]] : []));
    return {
      pool,
      sessions,
      writers: settledTotal,
      succeeded: all.filter((w) => w.outcome === 'success').length,
      seconds: windowMs / 1000,
      writersPerSecond: settledTotal / (windowMs / 1000),
      // A sample is the timer interval plus the delay (an idle loop reads ~10 ms): the delay is what is above it.
      eldP50Ms: Math.max(0, eld.percentile(50) / 1e6 - ELD_RESOLUTION_MS),
      eldP99Ms: Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS),
      eldMaxMs: Math.max(0, eld.max / 1e6 - ELD_RESOLUTION_MS),
      mainBusy,
      cores,
      secondRates: second.flatMap((w) => (w.hitRate !== null ? [w.hitRate] : [])),
      secondCached: second.reduce((s, w) => s + w.cached, 0),
      secondPrompt: second.reduce((s, w) => s + w.prompt, 0),
      firstRates: first.flatMap((w) => (w.hitRate !== null ? [w.hitRate] : [])),
      forkWriters: all.filter((w) => w.mode === 'fork').length,
      modelCalls: (await loopback.stats()).calls,
      secondFirstCallRates,
      tokensPerSession: plans.reduce((s, p) => s + p.tokens, 0) / plans.length,
      kibPerSession: plans.reduce((s, p) => s + p.bytes, 0) / plans.length / 1024,
      problems: [...problems].map(([k, n]) => `${n}× ${k}`).join('; '),
    };
  } finally {
    eld.disable();
    await daemon.stop();
    await clientTransport.close();
    await daemonTransport.close();
    await log.close();
    await loopback.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// section

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Row names the targets read. */
export const WRITERS_ROWS = {
  rate: (pool: number) => `writers/s, pool ${pool}`,
  ratio: 'writers/s pool 2 / pool 1',
  eldP99: (pool: number) => `main event-loop delay p99, pool ${pool}`,
  hitRate: (pool: number) => `2nd writer cache hit rate (median), pool ${pool}`,
} as const;

export interface WritersBenchOptions {
  /** Sessions per pool size (default WRITERS_BENCH_SESSIONS or 200). */
  readonly sessions?: number;
  /** Per-session deadline for both writers to settle (default 100 s). */
  readonly timeoutMs?: number;
}

export async function benchWriters(options: WritersBenchOptions = {}): Promise<BenchSection> {
  const sessions = Math.max(1, Math.floor(options.sessions ?? Number(process.env['WRITERS_BENCH_SESSIONS'] ?? 200)) || 200);
  const timeoutMs = options.timeoutMs ?? 100_000;
  // Warm-up: loads the tokenizer, the SDK and the worker code paths once, so pool 1 does not pay for them alone.
  await runPool(1, 4, 900_000, 30_000);
  const runs: PoolRun[] = [];
  for (const pool of [1, 2]) runs.push(await runPool(pool, sessions, pool * 10_000, timeoutMs));
  const rows: BenchRow[] = [];
  const [one, two] = runs as [PoolRun, PoolRun];
  rows.push({
    name: 'conversation per session',
    value: round(one.tokensPerSession, 0),
    unit: 'tokens',
    note: `${round(one.kibPerSession, 1)} KiB of text, ${sessions} sessions × 2 writers per pool size, loopback latency 50 ms`,
  });
  for (const r of runs) {
    const missing = r.sessions * 2 - r.writers;
    rows.push({
      name: WRITERS_ROWS.rate(r.pool),
      value: round(r.writersPerSecond),
      unit: 'writers/s',
      note:
        `${r.writers} writers (${r.succeeded} success, ${r.forkWriters} fork) in ${round(r.seconds, 1)} s, ${r.modelCalls} model calls; ` +
        `CPU cores used: main ${round(r.cores.main)}, loopback ${round(r.cores.loopback)}, pool + other threads ${round(r.cores.rest)}` +
        `${missing > 0 ? `; ${missing} did not settle in time` : ''}${r.problems !== '' ? `; ${r.problems}` : ''}`,
    });
  }
  rows.push({ name: WRITERS_ROWS.ratio, value: round(two.writersPerSecond / one.writersPerSecond), unit: '×', note: 'the pool shares the cores with the main thread, the loopback server and anything else running' });
  for (const r of runs) {
    rows.push({ name: WRITERS_ROWS.eldP99(r.pool), value: round(r.eldP99Ms), unit: 'ms', note: `p50 ${round(r.eldP50Ms)}, max ${round(r.eldMaxMs)} ms (delay beyond the ${ELD_RESOLUTION_MS} ms sampling interval); main loop busy ${Math.round(r.mainBusy * 100)} %, main thread CPU ${Math.round(r.cores.main * 100)} %` });
  }
  for (const r of runs) {
    rows.push({
      name: WRITERS_ROWS.hitRate(r.pool),
      value: round(median(r.secondRates), 3),
      unit: 'ratio',
      note: `${r.secondRates.length} writers, pooled ${round(r.secondCached / Math.max(1, r.secondPrompt), 3)}; its 1st call ${round(median(r.secondFirstCallRates), 3)}; 1st writers ${round(median(r.firstRates), 3)}`,
    });
  }
  return { title: `Checkpoint writers (${sessions} sessions per pool size, fork mode, loopback model)`, rows };
}

/** Target lines for `bench/main.ts`. */
export function writersTargets(section: BenchSection | undefined): {
  label: string;
  value: number | undefined;
  unit: string;
  target: string;
  pass: (value: number) => boolean;
}[] {
  const value = (name: string): number | undefined => section?.rows.find((r) => r.name === name)?.value;
  return [1, 2].flatMap((pool) => [
    { label: `writers: main event-loop delay p99, pool ${pool}`, value: value(WRITERS_ROWS.eldP99(pool)), unit: 'ms', target: '< 20', pass: (v: number) => v < 20 },
    { label: `writers: 2nd writer cache hit rate, pool ${pool}`, value: value(WRITERS_ROWS.hitRate(pool)), unit: 'ratio', target: '≥ 0.9', pass: (v: number) => v >= 0.9 },
  ]);
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const started = performance.now();
  const section = await benchWriters();
  console.log(section.title);
  for (const row of section.rows) console.log(`  ${row.name.padEnd(52)} ${String(row.value).padStart(10)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  console.log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
