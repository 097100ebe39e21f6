/**
 * When the event log should unmap its data file to hand back the file pages it touched (see
 * `LmdbEventLog.releaseMapped`).
 *
 * Where `/proc/self/status` exists (Linux) the measure is the process's resident file-backed memory (`RssFile`),
 * probed after commits (at most once per `PROBE_BYTES` written, less for a small budget, or `PROBE_COMMITS`
 * commits) and on the log's timer (pages touched by reads alone). Growth since the last reopen is compared with
 * the budget when the log is idle (no commit since the previous timer probe) and with `BUSY_FACTOR` × the budget
 * while it is busy: a reopen costs the pages every later read and write faults in again, so under load it is done
 * rarely, and once the load stops it is done at the next probe. Elsewhere, bytes written since the last reopen
 * stand in for it (reads of old records are then not counted).
 */
import { readFileSync } from 'node:fs';

/** Default budget of resident file pages before a reopen of an idle log. */
export const DEFAULT_RELEASE_MAPPED_BYTES = 16 * 2 ** 20;
/** A busy log reopens once this many budgets of pages are resident. */
export const BUSY_FACTOR = 4;
const PROBE_BYTES = 4 * 2 ** 20;
const PROBE_COMMITS = 256;

/** Resident file-backed bytes of this process, or undefined where that cannot be read. */
export type ResidentFileProbe = () => number | undefined;

export const residentFileBytes: ResidentFileProbe = () => {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'latin1');
  } catch {
    return undefined;
  }
  const at = status.indexOf('RssFile:');
  if (at < 0) return undefined;
  const kib = Number.parseInt(status.slice(at + 8, status.indexOf('\n', at)), 10);
  return Number.isFinite(kib) ? kib * 1024 : undefined;
};

/** Bytes of the encoded records of a committed batch (what `MappedPages.committed` is told). */
export function encodedBytes(batch: readonly { readonly encoded: readonly Uint8Array[] }[]): number {
  let bytes = 0;
  for (const pending of batch) for (const record of pending.encoded) bytes += record.byteLength;
  return bytes;
}

export class MappedPages {
  private readonly budget: number;
  private readonly probe: ResidentFileProbe;
  private readonly probeBytes: number;
  /** `probe()` right after the last reopen (or at start); undefined: no probe here, count written bytes. */
  private base: number | undefined;
  private written = 0;
  private sinceProbeBytes = 0;
  private sinceProbeCommits = 0;
  /** Commits since the last timer probe. */
  private sinceCheckCommits = 0;
  private isDue = false;

  constructor(budget: number, probe: ResidentFileProbe = residentFileBytes) {
    this.budget = budget;
    this.probe = probe;
    this.probeBytes = Math.min(PROBE_BYTES, budget / 16);
    this.base = budget > 0 ? probe() : undefined;
  }

  /** A reopen is due. */
  due(): boolean {
    return this.isDue;
  }

  /** Records one committed batch of `bytes` written; true when a reopen is now due (the busy threshold). */
  committed(bytes: number): boolean {
    if (this.budget <= 0 || this.isDue) return this.isDue;
    this.written += bytes;
    this.sinceProbeBytes += bytes;
    this.sinceProbeCommits += 1;
    this.sinceCheckCommits += 1;
    if (this.base === undefined) {
      this.isDue = this.written >= this.budget * BUSY_FACTOR;
      return this.isDue;
    }
    if (this.sinceProbeBytes < this.probeBytes && this.sinceProbeCommits < PROBE_COMMITS) return false;
    this.sinceProbeBytes = 0;
    this.sinceProbeCommits = 0;
    return this.compare(this.budget * BUSY_FACTOR);
  }

  /**
   * The timer's probe: true when a reopen is due — at the budget when nothing was committed since the previous
   * call, else at the busy threshold. Without a probe, written bytes count at the budget once the log is idle.
   */
  check(): boolean {
    if (this.budget <= 0 || this.isDue) return this.isDue;
    const idle = this.sinceCheckCommits === 0;
    this.sinceCheckCommits = 0;
    const threshold = idle ? this.budget : this.budget * BUSY_FACTOR;
    if (this.base === undefined) {
      this.isDue = this.written >= threshold;
      return this.isDue;
    }
    return this.compare(threshold);
  }

  /** The environment was reopened: start measuring again. */
  released(): void {
    this.isDue = false;
    this.written = 0;
    this.sinceProbeBytes = 0;
    this.sinceProbeCommits = 0;
    this.base = this.budget > 0 ? this.probe() : undefined;
  }

  private compare(threshold: number): boolean {
    const now = this.probe();
    this.isDue = now !== undefined && this.base !== undefined && now - this.base >= threshold;
    return this.isDue;
  }
}
