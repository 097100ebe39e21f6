/**
 * NATS append benchmark: `append` round trips through the whole daemon (NATS → decode → zod → mailbox → durable LMDB
 * group commit → actor fold in a worker → reply) measured side by side with raw NATS request/reply of a payload of the
 * same size on the same server. The two are measured in alternating blocks (the order flips every round) so machine
 * noise hits both alike; the p50 ratio append/raw is the figure to watch. A third interleaved block times a durable
 * `LmdbEventLog.append` alone (same log, no NATS, no actor): the floor that durability puts under every append.
 *
 * Everything runs in this process except nats-server: the daemon, its Piscina actor hosts, the client (second
 * connection) and the echo responder (third connection).
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/nats-append.bench.ts`
 * (env: NATS_BENCH_BLOCK, NATS_BENCH_ROUNDS).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { BatonDaemon, LmdbEventLog } from '@baton/runtime';
import { encodeRequest, type Message } from '@baton/protocol';
import { startLoopbackModel, startNatsServer, type LoopbackModel, type NatsServerHandle } from '@baton/testing';
// Not exported by `@baton/runtime` (the daemon takes any `EventLog`); the benchmark wants the durable adapter.
import type { BenchRow, BenchSection } from './bench-types.ts';

export interface NatsAppendBenchOptions {
  /** Requests per block (default 200). */
  readonly blockSize?: number;
  /** Rounds of one block of append pairs (scoped, unscoped), one raw and one commit-alone block (default 10). */
  readonly rounds?: number;
  /** Warm-up requests of each kind before measuring (default 500). */
  readonly warmup?: number;
  /** Sessions (= requests in flight) of the concurrent throughput rows; 0 skips them (default 32). */
  readonly concurrency?: number;
  /** Appends per session in one concurrent throughput run (default 100). */
  readonly concurrentPerSession?: number;
}

/** Row names that `bench/main.ts` reads for its targets (it matches them by name: keep them stable). */
const NATS_APPEND_ROWS = {
  appendP50: 'append round trip p50',
  appendP99: 'append round trip p99',
  rawP50: 'raw NATS request/reply p50',
  ratioP50: 'p50 ratio append/raw',
  scopedRatioP50: 'p50 ratio scoped/unscoped append',
} as const;

const ECHO_SUBJECT = 'bench.raw.echo';
const PROJECT = 'bench';

const SENTENCES = [
  'Ran the unit tests for the event log adapter; two failures in the group-commit path remain.',
  'The flush now awaits the transaction promise, so appends resolve only after the commit is synced.',
  'Next: check that duplicate message ids within one batch report the original sequence number.',
  'Read packages/runtime/src/daemon/session-service.ts to see where the fold happens after the log append.',
  'Updated the threshold ladder defaults and re-ran the property tests with a larger sample size.',
];

/** A realistic chat message (about 400 bytes encoded) with a unique id. */
function makeMessage(tag: string, i: number): Message {
  const text = `${SENTENCES[i % SENTENCES.length] as string} ${SENTENCES[(i + 2) % SENTENCES.length] as string} (step ${i})`;
  if (i % 2 === 0) return { id: `${tag}-${i}`, role: 'user', content: text, created_at: 1_750_000_000_000 + i };
  return {
    id: `${tag}-${i}`,
    role: 'assistant',
    content: text,
    finish_reason: 'stop',
    usage: { prompt_tokens: 12_000 + i, completion_tokens: 48, total_tokens: 12_048 + i },
    created_at: 1_750_000_000_000 + i,
  };
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[pos] as number;
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return values.length === 0 ? Number.NaN : sum / values.length;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const round2 = (x: number): number => Math.round(x * 100) / 100;
const micros = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1000;

interface Stack {
  readonly server: NatsServerHandle;
  readonly dir: string;
  readonly log: LmdbEventLog;
  readonly model: LoopbackModel;
  readonly daemonTransport: NatsTransport;
  readonly daemon: BatonDaemon;
  readonly clientTransport: NatsTransport;
  readonly echoTransport: NatsTransport;
  readonly client: BatonClient;
}

/** Starts everything; on failure stops what was started. */
async function startStack(): Promise<Stack> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const server = await startNatsServer();
    cleanups.push(() => server.stop());
    const dir = await mkdtemp(join(tmpdir(), 'baton-nats-bench-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const log = LmdbEventLog.open({ path: join(dir, 'log') });
    cleanups.push(() => log.close());
    const model = await startLoopbackModel({ mode: 'scripted' });
    cleanups.push(() => model.close());
    const daemonTransport = await NatsTransport.connect({ servers: server.url, name: 'bench-daemon' });
    cleanups.push(() => daemonTransport.close());
    const daemon = BatonDaemon.start({
      transport: daemonTransport,
      log,
      dataDir: join(dir, 'data'),
      poolSize: 2,
      model: { baseURL: model.baseURL, apiKey: 'bench' },
    });
    cleanups.push(() => daemon.stop());
    const clientTransport = await NatsTransport.connect({ servers: server.url, name: 'bench-client' });
    cleanups.push(() => clientTransport.close());
    const echoTransport = await NatsTransport.connect({ servers: server.url, name: 'bench-echo' });
    cleanups.push(() => echoTransport.close());
    echoTransport.subscribe(ECHO_SUBJECT, (msg) => msg.respond(msg.data));
    await echoTransport.flush();
    return { server, dir, log, model, daemonTransport, daemon, clientTransport, echoTransport, client: new BatonClient(clientTransport) };
  } catch (err) {
    await runCleanups(cleanups);
    throw err;
  }
}

async function runCleanups(cleanups: (() => Promise<unknown>)[]): Promise<void> {
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch {
      // best effort: keep cleaning up
    }
  }
}

/** Stops in dependency order: client side first, then the daemon (drains its queue), the log, the servers. */
async function stopStack(s: Stack): Promise<void> {
  await runCleanups([
    () => rm(s.dir, { recursive: true, force: true }),
    () => s.server.stop(),
    () => s.model.close(),
    () => s.log.close(),
    () => s.daemonTransport.close(),
    () => s.daemon.stop(),
    () => s.echoTransport.close(),
    () => s.clientTransport.close(),
  ]);
}

async function openSession(client: BatonClient): Promise<string> {
  const opened = await client.open({
    project_id: PROJECT,
    model: { id: 'bench-model', context_window: 100_000_000 },
    checkpoint: { enabled: false },
  });
  return opened.session_id;
}

export async function benchNatsAppend(options: NatsAppendBenchOptions = {}): Promise<BenchSection> {
  const blockSize = options.blockSize ?? 200;
  const rounds = options.rounds ?? 10;
  const warmup = options.warmup ?? 500;
  const concurrency = options.concurrency ?? 32;
  const perSession = options.concurrentPerSession ?? 100;

  const stack = await startStack();
  try {
    const { client, clientTransport } = stack;
    const sessionId = await openSession(client);
    let next = 0;
    const sample = makeMessage('size', 1);
    const requestBytes = encodeRequest({ messages: [sample] }, client.encoding);
    // Raw payload: the same bytes an append request carries (msgpack needs no headers, as for append).
    const rawPayload = requestBytes;

    const appendOnce = async (): Promise<number> => {
      const message = makeMessage('m', next++);
      const start = process.hrtime.bigint();
      const reply = await client.append(sessionId, [message]);
      const us = micros(start);
      if (reply.accepted !== 1) throw new Error(`append not accepted: ${JSON.stringify(reply)}`);
      return us;
    };
    // The same session's appends on the unscoped subject: a client that did not open it and has no project.
    const unscopedClient = new BatonClient(clientTransport);
    const unscopedOnce = async (): Promise<number> => {
      const message = makeMessage('u', next++);
      const start = process.hrtime.bigint();
      const reply = await unscopedClient.append(sessionId, [message]);
      const us = micros(start);
      if (reply.accepted !== 1) throw new Error(`append not accepted: ${JSON.stringify(reply)}`);
      return us;
    };
    const rawOnce = async (): Promise<number> => {
      const start = process.hrtime.bigint();
      const reply = await clientTransport.request(ECHO_SUBJECT, rawPayload);
      const us = micros(start);
      if (reply.data.byteLength !== rawPayload.byteLength) throw new Error('echo returned a different payload');
      return us;
    };

    let commits = 0;
    const commitOnce = async (): Promise<number> => {
      const record = { type: 'messages.appended', at: Date.now(), payload: { messages: [makeMessage('direct', commits)] } };
      commits++;
      const start = process.hrtime.bigint();
      await stack.log.append('bench/direct-commit', [record]);
      return micros(start);
    };

    for (let i = 0; i < warmup; i++) {
      await appendOnce();
      await unscopedOnce();
      await rawOnce();
      await commitOnce();
    }

    const appendUs: number[] = [];
    const rawUs: number[] = [];
    const commitUs: number[] = [];
    const unscopedUs: number[] = [];
    // Scoped and unscoped appends go in pairs, their order flipping every pair: what they cost apart is measured on
    // the same moment's machine, with nothing between them.
    let flip = false;
    const pairOnce = async (): Promise<number> => {
      flip = !flip;
      if (flip) {
        const scoped = await appendOnce();
        unscopedUs.push(await unscopedOnce());
        return scoped;
      }
      unscopedUs.push(await unscopedOnce());
      return await appendOnce();
    };
    const kinds: [() => Promise<number>, number[]][] = [
      [pairOnce, appendUs],
      [rawOnce, rawUs],
      [commitOnce, commitUs],
    ];
    for (let r = 0; r < rounds; r++) {
      // Rotate the order every round so no kind always runs first (or right after another).
      for (let k = 0; k < kinds.length; k++) {
        const [run, into] = kinds[(r + k) % kinds.length] as [() => Promise<number>, number[]];
        for (let i = 0; i < blockSize; i++) into.push(await run());
      }
    }

    const a = [...appendUs].sort((x, y) => x - y);
    const w = [...rawUs].sort((x, y) => x - y);
    const c = [...commitUs].sort((x, y) => x - y);
    const u = [...unscopedUs].sort((x, y) => x - y);
    const appendP50 = quantile(a, 0.5);
    const rawP50 = quantile(w, 0.5);
    const samples = `${a.length} sequential requests, ${rounds} interleaved rounds of ${blockSize}`;
    const rows: BenchRow[] = [
      { name: NATS_APPEND_ROWS.appendP50, value: round1(appendP50), unit: 'µs', note: `1 message, ${requestBytes.byteLength} B request; ${samples}` },
      { name: NATS_APPEND_ROWS.appendP99, value: round1(quantile(a, 0.99)), unit: 'µs', note: 'target < 2,000 µs' },
      { name: 'append round trip mean', value: round1(mean(a)), unit: 'µs' },
      { name: 'append round trip max', value: round1(a[a.length - 1] ?? Number.NaN), unit: 'µs' },
      { name: NATS_APPEND_ROWS.rawP50, value: round1(rawP50), unit: 'µs', note: `echo of ${rawPayload.byteLength} B on a third connection` },
      { name: 'raw NATS request/reply p99', value: round1(quantile(w, 0.99)), unit: 'µs' },
      { name: 'raw NATS request/reply mean', value: round1(mean(w)), unit: 'µs' },
      { name: NATS_APPEND_ROWS.ratioP50, value: round2(appendP50 / rawP50), unit: '×', note: 'target ≤ 2×' },
      { name: 'p99 ratio append/raw', value: round2(quantile(a, 0.99) / quantile(w, 0.99)), unit: '×' },
      {
        name: 'durable log commit alone p50',
        value: round1(quantile(c, 0.5)),
        unit: 'µs',
        note: 'context: LmdbEventLog.append of the same message, 1 in flight, same log, no NATS',
      },
      { name: 'durable log commit alone p99', value: round1(quantile(c, 0.99)), unit: 'µs' },
      {
        name: 'unscoped append round trip p50',
        value: round1(quantile(u, 0.5)),
        unit: 'µs',
        note: `the same session on baton.v1.session.<sid>.append (the rows above: baton.v1.p.${PROJECT}.session.<sid>.append)`,
      },
      { name: NATS_APPEND_ROWS.scopedRatioP50, value: round2(appendP50 / quantile(u, 0.5)), unit: '×', note: 'target ≤ 1.05' },
    ];

    if (concurrency > 0) {
      const sessions: string[] = [];
      for (let i = 0; i < concurrency; i++) sessions.push(await openSession(client));
      let tag = 0;
      const appendRun = async (): Promise<number> => {
        const t = `c${tag++}`;
        const start = process.hrtime.bigint();
        await Promise.all(
          sessions.map(async (sid, s) => {
            for (let i = 0; i < perSession; i++) await client.append(sid, [makeMessage(`${t}-${s}`, i)]);
          }),
        );
        return (concurrency * perSession) / (micros(start) / 1e6);
      };
      const rawRun = async (): Promise<number> => {
        const start = process.hrtime.bigint();
        await Promise.all(
          sessions.map(async () => {
            for (let i = 0; i < perSession; i++) await clientTransport.request(ECHO_SUBJECT, rawPayload);
          }),
        );
        return (concurrency * perSession) / (micros(start) / 1e6);
      };
      await appendRun();
      await rawRun();
      const appendRates: number[] = [];
      const rawRates: number[] = [];
      for (let r = 0; r < 5; r++) {
        if (r % 2 === 0) {
          appendRates.push(await appendRun());
          rawRates.push(await rawRun());
        } else {
          rawRates.push(await rawRun());
          appendRates.push(await appendRun());
        }
      }
      const appendRate = quantile([...appendRates].sort((x, y) => x - y), 0.5);
      const rawRate = quantile([...rawRates].sort((x, y) => x - y), 0.5);
      rows.push(
        {
          name: `append throughput, ${concurrency} sessions in flight`,
          value: Math.round(appendRate),
          unit: 'appends/s',
          note: `median of 5 runs of ${concurrency}×${perSession}`,
        },
        { name: `raw NATS throughput, ${concurrency} in flight`, value: Math.round(rawRate), unit: 'requests/s' },
        { name: '  throughput ratio append/raw', value: round2(appendRate / rawRate), unit: '×' },
      );
    }
    return { title: 'NATS append round trip (daemon over nats-server, durable LMDB, checkpoints off)', rows };
  } finally {
    await stopStack(stack);
  }
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const envNumber = (name: string): number | undefined => {
    const raw = process.env[name];
    return raw === undefined || raw === '' ? undefined : Number(raw);
  };
  const blockSize = envNumber('NATS_BENCH_BLOCK');
  const rounds = envNumber('NATS_BENCH_ROUNDS');
  const section = await benchNatsAppend({
    ...(blockSize === undefined ? {} : { blockSize }),
    ...(rounds === undefined ? {} : { rounds }),
  });
  console.log(section.title);
  for (const row of section.rows) {
    console.log(`  ${row.name.padEnd(48)} ${String(row.value).padStart(12)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  }
}
