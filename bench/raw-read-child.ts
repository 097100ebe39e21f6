/**
 * The raw-read baseline of the `session-load` section, in a fresh process like the daemon it is compared to: opens
 * the LMDB log and times `LmdbEventLog.read` over one whole stream (every record decoded, its payload touched), then
 * a second time (warm). Sends one `result` message.
 */
import { performance } from 'node:perf_hooks';
import { LmdbEventLog } from '@baton/runtime';
import { childConfig, runChild, sendToParent } from './bench-process.ts';

export interface RawReadChildConfig {
  /** The LMDB environment (`<data>/events`). */
  readonly path: string;
  readonly stream: string;
}

export interface RawReadResult {
  readonly records: number;
  /** First read in this process (ms). */
  readonly coldMs: number;
  /** Second read (ms). */
  readonly warmMs: number;
}

function readAll(log: LmdbEventLog, stream: string): number {
  let records = 0;
  let touched = 0;
  for (const record of log.read(stream)) {
    records++;
    if (record.payload !== undefined) touched++;
  }
  if (touched < 0) throw new Error('unreachable');
  return records;
}

async function main(): Promise<void> {
  const config = childConfig<RawReadChildConfig>();
  const log = LmdbEventLog.open({ path: config.path });
  let t0 = performance.now();
  const records = readAll(log, config.stream);
  const coldMs = performance.now() - t0;
  t0 = performance.now();
  readAll(log, config.stream);
  const warmMs = performance.now() - t0;
  await log.close();
  const result: RawReadResult = { records, coldMs, warmMs };
  await sendToParent({ type: 'result', ...result });
  process.exit(0);
}

runChild(main);
