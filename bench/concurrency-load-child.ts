/**
 * The load generator of the `concurrency` section, in its own process (so it shares no event loop with the service
 * under test): one NATS connection, the real `BatonClient`, `sessions` sessions opened with checkpoints disabled,
 * each appending one message per request, the next as soon as the reply is back. First a warm-up of `warmupSeconds`
 * (the same load, unmeasured), then the measured run of `perSession` appends per session. Sends `start` when the
 * measured run begins, then `result`: appends, elapsed seconds and latency quantiles (µs), and what the warm-up did.
 */
import { BatonClient, NatsTransport } from '@baton/client';
import { encodeRequest } from '@baton/protocol';
import { chatMessage } from './chat-messages.ts';
import { childConfig, quantile, runChild, sendToParent } from './bench-process.ts';

export interface LoadChildConfig {
  readonly natsUrl: string;
  readonly sessions: number;
  readonly perSession: number;
  /** Seconds of the same load before the measured run: lets V8 compile the hot code of every thread first. */
  readonly warmupSeconds: number;
  /** Characters of message content (about 100 bytes less than the msgpack request). */
  readonly contentBytes: number;
}

export interface LoadResult {
  readonly appends: number;
  readonly seconds: number;
  readonly throughput: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  /** Mean msgpack request size in bytes. */
  readonly requestBytes: number;
  /** Appends during the warm-up, and its length in seconds. */
  readonly warmupAppends: number;
  readonly warmupSeconds: number;
}

async function main(): Promise<void> {
  const config = childConfig<LoadChildConfig>();
  const transport = await NatsTransport.connect({ servers: config.natsUrl, name: `bench-load-${process.pid}` });
  const client = new BatonClient(transport);
  const sessions: string[] = [];
  for (let s = 0; s < config.sessions; s++) {
    const opened = await client.open({ project_id: 'bench', model: { id: 'bench-model', context_window: 100_000_000 }, checkpoint: { enabled: false } });
    sessions.push(opened.session_id);
  }
  // Messages are built before the clock starts, so the client loop only sends and waits.
  const build = (phase: string, count: number) => sessions.map((_, s) => Array.from({ length: count }, (_, i) => chatMessage(`${phase}${s}`, i, config.contentBytes)));
  const measured = build('m', config.perSession);
  let requestBytes = 0;
  for (const m of measured[0] ?? []) requestBytes += encodeRequest({ messages: [m] }, client.encoding).byteLength;
  requestBytes /= Math.max(1, config.perSession);

  // Warm-up messages are built as they go (the warm-up is not measured): as many as the time allows.
  const warmStart = process.hrtime.bigint();
  const warmEnd = warmStart + BigInt(Math.round(config.warmupSeconds * 1e9));
  let warmupAppends = 0;
  await Promise.all(
    sessions.map(async (sid, s) => {
      for (let i = 0; process.hrtime.bigint() < warmEnd; i++) {
        await client.append(sid, [chatMessage(`w${s}`, i, config.contentBytes)]);
        warmupAppends++;
      }
    }),
  );
  const warmupSeconds = Number(process.hrtime.bigint() - warmStart) / 1e9;

  const latencies = new Float64Array(config.sessions * config.perSession);
  let n = 0;
  // The parent samples the service's CPU time between `start` and `result`.
  await sendToParent({ type: 'start' });
  const start = process.hrtime.bigint();
  await Promise.all(
    sessions.map(async (sid, s) => {
      for (const m of measured[s] ?? []) {
        const t0 = process.hrtime.bigint();
        const reply = await client.append(sid, [m]);
        latencies[n++] = Number(process.hrtime.bigint() - t0) / 1000;
        if (reply.accepted !== 1) throw new Error(`append not accepted: ${JSON.stringify(reply)}`);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort();
  let sum = 0;
  for (const l of latencies) sum += l;
  const result: LoadResult = {
    appends: n,
    seconds,
    throughput: n / seconds,
    p50: quantile(latencies, 0.5),
    p90: quantile(latencies, 0.9),
    p99: quantile(latencies, 0.99),
    p999: quantile(latencies, 0.999),
    max: latencies[latencies.length - 1] ?? Number.NaN,
    mean: sum / Math.max(1, n),
    requestBytes,
    warmupAppends,
    warmupSeconds,
  };
  await transport.close();
  await sendToParent({ type: 'result', ...result });
  process.exit(0);
}

runChild(main);
