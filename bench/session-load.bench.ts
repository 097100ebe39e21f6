/**
 * Session load benchmark: how long a fresh daemon takes to answer the first request for a long session, loaded from
 * its snapshot or by re-folding every input, next to a raw read of the same stream.
 *
 * Build (once): a daemon in its own process (`daemon-child.ts`, pool 2, default residency: a snapshot every 500
 * inputs) gets one session of 20 000 main-slice user/assistant messages (assistant ones with usage; ~700 B of text
 * each) appended 20 per request (1 000 inputs, checkpoints disabled), plus two tiny sessions, and is stopped
 * gracefully (which appends a `drain.requested` input per resident session and writes the queued snapshot); then a
 * daemon loads the three sessions once and is killed, so whatever a first load after a stop appends (the daemon lifts
 * the recorded drain) is in the log before any measurement. The log holds two snapshots (after inputs 500 and 1000).
 * Two copies of it are made through `LmdbEventLog` read/append
 * (the same records, keys re-registered, seqs renumbered):
 *   - `no snapshot`: every `snapshot` record dropped, so loading re-folds all 1 001 inputs;
 *   - `older snapshot`: the newest snapshot dropped, so loading starts at input 500 and re-folds 501 inputs (a
 *     daemon that stopped between two snapshots without writing one, e.g. after a crash).
 * `with snapshot` is the daemon's own log (the snapshot covers everything but the `drain.requested`).
 *
 * Measure (several repeats, the order of the variants rotating every repeat): a fresh daemon process on the data
 * directory; the time from its `ready` message (subscribed, start-up repair done) to the reply of `status` for the
 * long session. Two modes:
 *   - cold: `status` is the daemon's first request (the definition; includes the actor hosts still starting
 *     up, which the `control` row, the same for a 2-message session, shows on its own);
 *   - warm daemon: both actor hosts first load a tiny session each, then the long session is timed.
 * After each run the daemon is killed (SIGKILL), so no run appends anything to the log the next one reads. The
 * baseline is `LmdbEventLog.read` over the whole stream of the daemon's log, in a fresh process (`raw-read-child.ts`).
 * Figures are medians over the repeats; ratios are medians of per-repeat ratios.
 *
 * Standalone: `npx tsx --conditions=@baton/source bench/session-load.bench.ts`
 * (env: LOAD_BENCH_REPEATS, LOAD_BENCH_MESSAGES).
 */
import { cpSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { BatonClient, NatsTransport } from '@baton/client';
import { SNAPSHOT_KEY, sessionStream, type AppendInput, type StoredRecord } from '@baton/log-schema';
import type { Message } from '@baton/protocol';
import { LmdbEventLog } from '@baton/runtime';
import { startNatsServer } from '@baton/testing';
// The key a message id registers is internal to the daemon; the copy re-registers the same keys.
import { messageKey } from '@baton/log-schema';
import type { BenchRow, BenchSection } from './bench-types.ts';
import { MiB, median, printStandalone, round1, round2, spawnBenchChild, treeSize, withChildren, type BenchChild, type SectionTarget } from './bench-process.ts';
import { chatMessage } from './chat-messages.ts';
import type { DaemonChildConfig } from './daemon-child.ts';
import type { RawReadChildConfig, RawReadResult } from './raw-read-child.ts';

export interface SessionLoadBenchOptions {
  /** Messages of the long session (default 20 000). */
  readonly messages?: number;
  /** Messages per append (default 20: 1 000 inputs for 20 000 messages). */
  readonly batch?: number;
  /** Repeats of every measurement (default 5). */
  readonly repeats?: number;
}

/** Row names that the targets read (keep them stable). */
export const SESSION_LOAD_ROWS = {
  coldWith: 'cold load, with snapshot',
  coldWithout: 'cold load, no snapshot',
  coldRatio: 'cold: with / without snapshot',
} as const;

const OPEN = { project_id: 'bench', model: { id: 'bench-model', context_window: 100_000_000 }, checkpoint: { enabled: false } } as const;

type LogName = 'with' | 'older' | 'none';

interface Built {
  readonly dirs: Record<LogName, string>;
  readonly big: string;
  readonly tiny: readonly [string, string];
  readonly snapshots: number;
  readonly records: number;
  readonly inputs: number;
  /** Inputs after the newest snapshot, and after the one before it. */
  readonly tailNewest: number;
  readonly tailOlder: number;
  readonly contentBytes: number;
  readonly logBytes: number;
  readonly buildSeconds: number;
}

/** Messages of the long session: alternating user/assistant, 200–1 200 characters, usage growing like a real one. */
function longSession(count: number): Message[] {
  const out: Message[] = [];
  let prompt = 2_000;
  for (let i = 0; i < count; i++) {
    const bytes = 200 + ((i * 379) % 1000);
    out.push(chatMessage('long', i, bytes, prompt));
    prompt += Math.round(bytes / 4);
  }
  return out;
}

function toInput(r: StoredRecord): AppendInput {
  let keys: string[] | undefined;
  if (r.type === 'messages.appended') keys = (r.payload as { messages: { id: string }[] }).messages.map((m) => messageKey(m.id));
  else if (r.type === 'snapshot') keys = [SNAPSHOT_KEY];
  return { type: r.type, at: r.at, payload: r.payload, ...(r.msgId !== undefined ? { msgId: r.msgId } : {}), ...(keys !== undefined ? { keys } : {}) };
}

/** Copies a data directory, the log through `LmdbEventLog` without the records `keep` refuses. */
async function copyDataDir(from: string, to: string, source: LmdbEventLog, keep: (stream: string, r: StoredRecord) => boolean): Promise<void> {
  cpSync(from, to, { recursive: true, filter: (src) => src !== join(from, 'events') });
  const target = LmdbEventLog.open({ path: join(to, 'events') });
  try {
    for (const stream of [...source.streams()]) {
      const records = [...source.read(stream)].filter((r) => keep(stream, r));
      for (let i = 0; i < records.length; i += 200) await target.append(stream, records.slice(i, i + 200).map(toInput));
    }
  } finally {
    await target.close();
  }
}

async function build(root: string, natsUrl: string, messages: number, batch: number, track: (c: BenchChild) => BenchChild): Promise<Built> {
  const dirs: Record<LogName, string> = { with: join(root, 'with'), older: join(root, 'older'), none: join(root, 'none') };
  const t0 = performance.now();
  const daemon = track(spawnBenchChild('./daemon-child.ts', { natsUrl, dataDir: dirs.with, poolSize: 2 } satisfies DaemonChildConfig));
  const transport = await NatsTransport.connect({ servers: natsUrl, name: 'bench-session-load-build' });
  let big = '';
  const tiny: string[] = [];
  let contentBytes = 0;
  try {
    await daemon.next('ready', 120_000);
    const client = new BatonClient(transport, { timeoutMs: 120_000 });
    big = (await client.open(OPEN)).session_id;
    const all = longSession(messages);
    for (const m of all) contentBytes += typeof m.content === 'string' ? m.content.length : 0;
    for (let i = 0; i < all.length; i += batch) {
      const part = all.slice(i, i + batch);
      const reply = await client.append(big, part);
      if (reply.accepted !== part.length) throw new Error(`append accepted ${reply.accepted} of ${part.length}`);
    }
    for (let t = 0; t < 2; t++) {
      const id = (await client.open(OPEN)).session_id;
      await client.append(id, [chatMessage(`tiny${t}`, 0, 300), chatMessage(`tiny${t}`, 1, 300)]);
      tiny.push(id);
    }
  } finally {
    await transport.close();
    // Graceful: the queued snapshot and decisions are written.
    await daemon.stop(120_000);
  }
  // Settle: whatever a daemon appends when it first loads these sessions after a graceful stop (e.g. lifting the
  // drain the stop recorded) is appended now, once, so every measured run reads the same log.
  const settle = track(spawnBenchChild('./daemon-child.ts', { natsUrl, dataDir: dirs.with, poolSize: 2 } satisfies DaemonChildConfig));
  const settleTransport = await NatsTransport.connect({ servers: natsUrl, name: 'bench-session-load-settle' });
  try {
    await settle.next('ready', 120_000);
    const client = new BatonClient(settleTransport, { timeoutMs: 300_000 });
    for (const id of [big, ...tiny]) await client.status(id);
    // Decisions are written after 50 ms idle.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  } finally {
    await settleTransport.close();
    settle.kill();
    await settle.exited;
  }
  const buildSeconds = (performance.now() - t0) / 1000;

  const source = LmdbEventLog.open({ path: join(dirs.with, 'events') });
  try {
    const stream = sessionStream(big);
    const records = [...source.read(stream)];
    const snapshotSeqs = records.filter((r) => r.type === 'snapshot').map((r) => r.seq);
    const newest = snapshotSeqs.at(-1);
    if (newest === undefined || snapshotSeqs.length < 2) throw new Error(`expected at least two snapshots in ${stream}, found ${snapshotSeqs.length}`);
    await copyDataDir(dirs.with, dirs.none, source, (_s, r) => r.type !== 'snapshot');
    await copyDataDir(dirs.with, dirs.older, source, (s, r) => !(s === stream && r.seq === newest));
    const isInput = (r: StoredRecord): boolean => r.type !== 'session.opened' && r.type !== 'decision' && r.type !== 'snapshot';
    const inputs = records.filter(isInput).length;
    const older = snapshotSeqs.at(-2) ?? 0;
    return {
      dirs,
      big,
      tiny: [tiny[0] as string, tiny[1] as string],
      snapshots: snapshotSeqs.length,
      records: records.length,
      inputs,
      tailNewest: records.filter((r) => isInput(r) && r.seq > newest).length,
      tailOlder: records.filter((r) => isInput(r) && r.seq > older).length,
      contentBytes,
      logBytes: treeSize(join(dirs.with, 'events')).apparent,
      buildSeconds,
    };
  } finally {
    await source.close();
  }
}

interface Variant {
  readonly key: string;
  readonly log: LogName;
  /** Time the tiny session instead of the long one (the control). */
  readonly control: boolean;
  /** Load both tiny sessions (one per actor host) before timing. */
  readonly warm: boolean;
}

const VARIANTS: readonly Variant[] = [
  { key: 'cold with', log: 'with', control: false, warm: false },
  { key: 'cold older', log: 'older', control: false, warm: false },
  { key: 'cold none', log: 'none', control: false, warm: false },
  { key: 'cold control', log: 'with', control: true, warm: false },
  { key: 'warm with', log: 'with', control: false, warm: true },
  { key: 'warm older', log: 'older', control: false, warm: true },
  { key: 'warm none', log: 'none', control: false, warm: true },
];

async function timeLoad(v: Variant, b: Built, client: BatonClient, natsUrl: string, track: (c: BenchChild) => BenchChild): Promise<number> {
  const daemon = track(spawnBenchChild('./daemon-child.ts', { natsUrl, dataDir: b.dirs[v.log], poolSize: 2 } satisfies DaemonChildConfig));
  try {
    await daemon.next('ready', 120_000);
    if (v.warm) {
      // One tiny session per actor host (a session goes to the least-loaded one), then a pause.
      await Promise.all(b.tiny.map((id) => client.status(id)));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const t0 = performance.now();
    await client.status(v.control ? b.tiny[0] : b.big, { timeoutMs: 300_000 });
    return performance.now() - t0;
  } finally {
    // Killed, not stopped: a graceful stop would append `drain.requested` to the loaded sessions.
    daemon.kill();
    await daemon.exited;
  }
}

async function timeRawRead(b: Built, track: (c: BenchChild) => BenchChild): Promise<RawReadResult> {
  const child = track(spawnBenchChild('./raw-read-child.ts', { path: join(b.dirs.with, 'events'), stream: sessionStream(b.big) } satisfies RawReadChildConfig));
  const result = (await child.next('result', 300_000)) as unknown as RawReadResult;
  await child.exited;
  return result;
}

export async function benchSessionLoad(options: SessionLoadBenchOptions = {}): Promise<BenchSection> {
  const messages = options.messages ?? 20_000;
  const batch = options.batch ?? 20;
  const repeats = Math.max(1, options.repeats ?? 5);
  const server = await startNatsServer();
  const root = await mkdtemp(join(tmpdir(), 'baton-load-bench-'));
  try {
    return await withChildren(async (track) => {
      const b = await build(root, server.url, messages, batch, track);
      const transport = await NatsTransport.connect({ servers: server.url, name: 'bench-session-load' });
      const times = new Map<string, number[]>(VARIANTS.map((v) => [v.key, []]));
      const raw: RawReadResult[] = [];
      try {
        const client = new BatonClient(transport, { timeoutMs: 120_000 });
        const kinds = [...VARIANTS.map((v) => v.key), 'raw'];
        for (let r = 0; r < repeats; r++) {
          for (let k = 0; k < kinds.length; k++) {
            const key = kinds[(r + k) % kinds.length] as string;
            const variant = VARIANTS.find((v) => v.key === key);
            if (variant === undefined) raw.push(await timeRawRead(b, track));
            else times.get(key)?.push(await timeLoad(variant, b, client, server.url, track));
          }
        }
      } finally {
        await transport.close();
      }
      return { title: `Session load: a ${messages}-message session in a fresh daemon, with and without snapshots`, rows: rowsOf(b, times, raw, repeats, messages, batch) };
    });
  } finally {
    await rm(root, { recursive: true, force: true });
    await server.stop();
  }
}

function rowsOf(b: Built, times: Map<string, number[]>, raw: readonly RawReadResult[], repeats: number, messages: number, batch: number): BenchRow[] {
  const t = (key: string): number[] => times.get(key) ?? [];
  const rawCold = raw.map((x) => x.coldMs);
  const ratio = (a: number[], d: number[]): number => round2(median(a.map((x, i) => x / (d[i] as number))));
  const ms = (xs: number[]): number => round1(median(xs));
  const spread = (xs: number[]): string => `min ${round1(Math.min(...xs))}, max ${round1(Math.max(...xs))} ms`;
  const tail = `${b.inputs} inputs in ${b.records} records`;
  return [
    {
      name: 'long session',
      value: messages,
      unit: 'messages',
      note: `${messages / batch} appends of ${batch}, ${round1(b.contentBytes / MiB)} MiB of text; ${tail}, ${b.snapshots} snapshots; log ${round1(b.logBytes / MiB)} MiB; built in ${round1(b.buildSeconds)} s`,
    },
    { name: SESSION_LOAD_ROWS.coldWith, value: ms(t('cold with')), unit: 'ms', note: `ready → status reply, first request; ${b.tailNewest} inputs after the snapshot; ${spread(t('cold with'))}` },
    { name: 'cold load, older snapshot', value: ms(t('cold older')), unit: 'ms', note: `the snapshot before, ${b.tailOlder} inputs re-folded; ${spread(t('cold older'))}` },
    { name: SESSION_LOAD_ROWS.coldWithout, value: ms(t('cold none')), unit: 'ms', note: `all ${b.inputs} inputs re-folded; ${spread(t('cold none'))}` },
    { name: 'cold control: 2-message session', value: ms(t('cold control')), unit: 'ms', note: `the same first request for a tiny session (actor hosts starting, code loading); ${spread(t('cold control'))}` },
    { name: 'warm daemon, with snapshot', value: ms(t('warm with')), unit: 'ms', note: `both hosts served a tiny session first; ${spread(t('warm with'))}` },
    { name: 'warm daemon, older snapshot', value: ms(t('warm older')), unit: 'ms', note: spread(t('warm older')) },
    { name: 'warm daemon, no snapshot', value: ms(t('warm none')), unit: 'ms', note: spread(t('warm none')) },
    {
      name: 'raw LmdbEventLog.read of the stream',
      value: ms(rawCold),
      unit: 'ms',
      note: `${raw[0]?.records ?? 0} records, first read in a fresh process; second read ${ms(raw.map((x) => x.warmMs))} ms`,
    },
    { name: SESSION_LOAD_ROWS.coldRatio, value: ratio(t('cold with'), t('cold none')), unit: '×', note: `median of ${repeats} per-repeat ratios` },
    { name: 'cold: older snapshot / no snapshot', value: ratio(t('cold older'), t('cold none')), unit: '×' },
    { name: 'cold: with snapshot / raw read', value: ratio(t('cold with'), rawCold), unit: '×' },
    { name: 'cold: no snapshot / raw read', value: ratio(t('cold none'), rawCold), unit: '×' },
    { name: 'warm: with / without snapshot', value: ratio(t('warm with'), t('warm none')), unit: '×' },
    { name: 'warm: older snapshot / no snapshot', value: ratio(t('warm older'), t('warm none')), unit: '×' },
    { name: 'warm: with snapshot / raw read', value: ratio(t('warm with'), rawCold), unit: '×' },
    { name: 'warm: no snapshot / raw read', value: ratio(t('warm none'), rawCold), unit: '×' },
  ];
}

/** The issue sets no figure for this section; the target line checks that a snapshot makes loading faster. */
export function sessionLoadTargets(section: BenchSection | undefined): SectionTarget[] {
  const ratio = section?.rows.find((r) => r.name === SESSION_LOAD_ROWS.coldRatio)?.value;
  return [{ label: 'session load: cold, with / without snapshot', value: ratio, unit: '×', target: '< 1 (snapshot helps)', pass: (v) => v < 1 }];
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  const envNumber = (name: string): number | undefined => {
    const raw = process.env[name];
    return raw === undefined || raw === '' ? undefined : Number(raw);
  };
  const repeats = envNumber('LOAD_BENCH_REPEATS');
  const messages = envNumber('LOAD_BENCH_MESSAGES');
  const started = performance.now();
  const section = await benchSessionLoad({
    ...(repeats === undefined ? {} : { repeats }),
    ...(messages === undefined ? {} : { messages }),
  });
  printStandalone(section, (performance.now() - started) / 1000);
}
