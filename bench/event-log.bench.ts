/**
 * Event-log benchmark: durable appends through `LmdbEventLog` (group commit) side by side with raw lmdb-js batched
 * puts of the same payloads, and replay throughput of `read()`. Every figure is the median of several runs, each in
 * a fresh temporary directory.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/event-log.bench.ts`
 * (env: EVLOG_BENCH_RECORDS, EVLOG_BENCH_REPEATS).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { open } from 'lmdb';
import { LmdbEventLog } from '@baton/runtime';
// The record codec is internal to the LMDB adapter; the bench measures it directly.
import { createRecordPackr, toLogRecord } from '../packages/runtime/src/event-log/codec.ts';
import type { AppendInput } from '@baton/log-schema';
import type { BenchRow, BenchSection } from './bench-types.ts';

export interface EventLogBenchOptions {
  /** Records per measurement (default 100 000). */
  readonly records?: number;
  /** Runs per measurement; the median is reported (default 5). */
  readonly repeats?: number;
  /** Concurrent single-record writers (default 1000). */
  readonly writers?: number;
}

const WORDS = ['context', 'session', 'token', 'checkpoint', 'agent', 'rebuild', 'summary', 'tool', 'result', 'turn'];

/** A deterministic record whose encoded form is about 200 bytes. */
function makeRecord(i: number, withMsgId: boolean): AppendInput {
  let text = '';
  let x = (i * 2654435761) >>> 0;
  while (text.length < 80) {
    x = (x * 1103515245 + 12345) >>> 0;
    text += `${WORDS[x % WORDS.length]} `;
  }
  const payload = { session: `session-${(i % 1000).toString().padStart(6, '0')}`, role: 'assistant', text, tokens: i % 4096 };
  const record = { type: 'turn.appended', at: 1_750_000_000_000 + i, payload };
  return withMsgId ? { ...record, msgId: `msg-${i.toString(36)}-${x.toString(36)}` } : record;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Bytes this process has caused to be written to storage (Linux `/proc/self/io`), undefined elsewhere. */
function storageBytesWritten(): number | undefined {
  try {
    const match = /^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

interface Run {
  readonly rate: number;
  /** Storage bytes written per record (incl. fsync'd pages of every index), when measurable. */
  readonly bytesPerRecord: number | undefined;
}

/** Times `body` (which handles `count` records) and the storage bytes it wrote. */
async function measure(count: number, body: () => void | Promise<void>): Promise<Run> {
  const bytesBefore = storageBytesWritten();
  const start = performance.now();
  await body();
  const seconds = (performance.now() - start) / 1000;
  const bytesAfter = storageBytesWritten();
  return {
    rate: count / seconds,
    bytesPerRecord: bytesBefore === undefined || bytesAfter === undefined ? undefined : (bytesAfter - bytesBefore) / count,
  };
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-evlog-bench-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `writers` concurrent loops, each appending one record at a time to its own stream and awaiting it. */
async function appendSingles(records: AppendInput[], writers: number): Promise<Run> {
  return withTempDir(async (dir) => {
    const log = LmdbEventLog.open({ path: dir });
    let next = 0;
    const run = await measure(records.length, async () => {
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const stream = `session.${w}`;
          for (let i = next++; i < records.length; i = next++) await log.append(stream, [records[i] as AppendInput]);
        }),
      );
    });
    await log.close();
    return run;
  });
}

/** `writers` concurrent loops appending batches of `batchSize` records. */
async function appendBatches(records: AppendInput[], batchSize: number, writers: number): Promise<Run> {
  return withTempDir(async (dir) => {
    const log = LmdbEventLog.open({ path: dir });
    let next = 0;
    const run = await measure(records.length, async () => {
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          const stream = `session.${w}`;
          for (let i = next; i < records.length; i = next) {
            next += batchSize;
            await log.append(stream, records.slice(i, i + batchSize));
          }
        }),
      );
    });
    await log.close();
    return run;
  });
}

/** Raw lmdb-js: the same records under `[stream, seq]` keys, `perTxn` puts per `transactionSync` (synced commit). */
async function rawPuts(records: AppendInput[], perTxn: number, streams: number): Promise<Run> {
  return withTempDir(async (dir) => {
    const env = open({ path: dir });
    const db = env.openDB<unknown, [string, number]>('records', { encoding: 'msgpack' });
    const values = records.map(toLogRecord);
    const run = await measure(records.length, () => {
      for (let base = 0; base < values.length; base += perTxn) {
        env.transactionSync(() => {
          const end = Math.min(base + perTxn, values.length);
          for (let i = base; i < end; i++) void db.put([`session.${i % streams}`, i + 1], values[i]);
        });
      }
    });
    await env.close();
    return run;
  });
}

/** Replay: `read()` of one stream holding all records, fully decoded. */
async function replay(records: AppendInput[], repeats: number): Promise<number[]> {
  return withTempDir(async (dir) => {
    const log = LmdbEventLog.open({ path: dir });
    const chunk = 1000;
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < records.length; i += chunk) pending.push(log.append('replay', records.slice(i, i + chunk)));
    await Promise.all(pending);
    const rates: number[] = [];
    for (let r = 0; r < repeats; r++) {
      let count = 0;
      let tokens = 0;
      const start = performance.now();
      for (const record of log.read('replay')) {
        count++;
        tokens += (record.payload as { tokens: number }).tokens;
      }
      const seconds = (performance.now() - start) / 1000;
      if (count !== records.length || tokens < 0) throw new Error(`replay read ${count} records`);
      rates.push(count / seconds);
    }
    await log.close();
    return rates;
  });
}

export async function benchEventLog(options: EventLogBenchOptions = {}): Promise<BenchSection> {
  const n = options.records ?? 100_000;
  const repeats = options.repeats ?? 5;
  const writers = options.writers ?? 1000;
  const batchWriters = 10;
  const withMsgId = Array.from({ length: n }, (_, i) => makeRecord(i, true));
  const withoutMsgId = Array.from({ length: n }, (_, i) => makeRecord(i, false));
  const encodedBytes = createRecordPackr().pack(toLogRecord(withMsgId[0] as AppendInput)).length;

  // warm-up (JIT, page cache, native module)
  await appendSingles(withMsgId.slice(0, 5000), 100);
  await rawPuts(withMsgId.slice(0, 5000), 1000, writers);

  // Each repetition runs every scenario back to back, so a slow phase of the machine (disk, CPU contention) hits
  // the raw baseline and the adapter alike; ratios are taken within a repetition, then the median is reported.
  const raw: Run[] = [];
  const singles: Run[] = [];
  const singlesNoId: Run[] = [];
  const rawFew: Run[] = [];
  const batches: Run[] = [];
  for (let r = 0; r < repeats; r++) {
    raw.push(await rawPuts(withMsgId, 1000, writers));
    singles.push(await appendSingles(withMsgId, writers));
    singlesNoId.push(await appendSingles(withoutMsgId, writers));
    rawFew.push(await rawPuts(withMsgId, 1000, batchWriters));
    batches.push(await appendBatches(withMsgId, 100, batchWriters));
  }
  const rate = (runs: Run[]): number => Math.round(median(runs.map((run) => run.rate)));
  const ratio = (runs: Run[], base: Run[]): number =>
    round2(median(runs.map((run, i) => run.rate / (base[i] as Run).rate)));
  const written = (runs: Run[]): string => {
    const bytes = runs.map((run) => run.bytesPerRecord);
    return bytes.every((b) => b !== undefined) ? `; ${Math.round(median(bytes))} B written to disk per record` : '';
  };
  const replayRate = median(await replay(withMsgId, repeats));

  const rows: BenchRow[] = [
    {
      name: `raw lmdb-js put, 1000/transactionSync, ${writers} streams`,
      value: rate(raw),
      unit: 'records/s',
      note: `${n} records of ~${encodedBytes} B, keys [stream, seq], median of ${repeats}${written(raw)}`,
    },
    {
      name: `LmdbEventLog.append ×1, ${writers} concurrent writers, msgId`,
      value: rate(singles),
      unit: 'records/s',
      note: `durable ack per append; target ≥ 50 000/s${written(singles)}`,
    },
    { name: '  ratio to raw (same streams)', value: ratio(singles, raw), unit: '×', note: 'median per-run ratio; target ≥ 0.5' },
    {
      name: `LmdbEventLog.append ×1, ${writers} concurrent writers, no msgId`,
      value: rate(singlesNoId),
      unit: 'records/s',
      note: written(singlesNoId).slice(2),
    },
    { name: '  ratio to raw (same streams)', value: ratio(singlesNoId, raw), unit: '×' },
    {
      name: `raw lmdb-js put, 1000/transactionSync, ${batchWriters} streams`,
      value: rate(rawFew),
      unit: 'records/s',
      note: written(rawFew).slice(2),
    },
    {
      name: `LmdbEventLog.append ×100, ${batchWriters} concurrent writers, msgId`,
      value: rate(batches),
      unit: 'records/s',
      note: written(batches).slice(2),
    },
    { name: `  ratio to raw (${batchWriters} streams)`, value: ratio(batches, rawFew), unit: '×' },
    {
      name: 'LmdbEventLog.read replay, one stream',
      value: Math.round(replayRate),
      unit: 'events/s',
      note: `${n} records decoded; target ≥ 100 000/s`,
    },
  ];
  return { title: 'Event log (LMDB, durable group commit)', rows };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const envNumber = (name: string): number | undefined => {
    const raw = process.env[name];
    return raw === undefined || raw === '' ? undefined : Number(raw);
  };
  const records = envNumber('EVLOG_BENCH_RECORDS');
  const repeats = envNumber('EVLOG_BENCH_REPEATS');
  const section = await benchEventLog({
    ...(records === undefined ? {} : { records }),
    ...(repeats === undefined ? {} : { repeats }),
  });
  console.log(section.title);
  for (const row of section.rows) {
    console.log(`  ${row.name.padEnd(62)} ${String(row.value).padStart(12)} ${row.unit}${row.note ? `  (${row.note})` : ''}`);
  }
}
