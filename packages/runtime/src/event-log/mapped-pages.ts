/**
 * When the event log should unmap its data file to hand the file pages it touched back (see
 * `LmdbEventLog.releaseMapped`).
 *
 * Where `/proc/self/status` exists (Linux) the measure is the process's resident file-backed memory (`RssFile`),
 * read at most once per `PROBE_BYTES` written (less for a small budget) or `PROBE_COMMITS` commits: a reopen is due once it has grown by the
 * budget since the last one; the log also probes on a timer, for pages touched by reads alone. Elsewhere, bytes written since the last reopen stand in for it (reads of old records
 * are then not counted).
 */
import { readFileSync } from 'node:fs';

/** Default budget of resident file pages before a reopen. */
export const DEFAULT_RELEASE_MAPPED_BYTES = 16 * 2 ** 20;
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

export class MappedPages {
  private readonly budget: number;
  private readonly probe: ResidentFileProbe;
  private readonly probeBytes: number;
  /** `probe()` right after the last reopen (or at start); undefined: no probe here, count written bytes. */
  private base: number | undefined;
  private written = 0;
  private sinceProbeBytes = 0;
  private sinceProbeCommits = 0;
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

  /** Records one committed batch of `bytes` written; true when a reopen is now due. */
  committed(bytes: number): boolean {
    if (this.budget <= 0 || this.isDue) return this.isDue;
    this.written += bytes;
    this.sinceProbeBytes += bytes;
    this.sinceProbeCommits += 1;
    if (this.base === undefined) {
      this.isDue = this.written >= this.budget;
      return this.isDue;
    }
    if (this.sinceProbeBytes < this.probeBytes && this.sinceProbeCommits < PROBE_COMMITS) return false;
    this.sinceProbeBytes = 0;
    this.sinceProbeCommits = 0;
    return this.check();
  }

  /**
   * Probes now (for pages touched by reads, which no commit reports); true when a reopen is due. Without a probe
   * only written bytes count, and this changes nothing.
   */
  check(): boolean {
    if (this.budget <= 0 || this.isDue || this.base === undefined) return this.isDue;
    const now = this.probe();
    this.isDue = now !== undefined && now - this.base >= this.budget;
    return this.isDue;
  }

  /** The environment was reopened: start measuring again. */
  released(): void {
    this.isDue = false;
    this.written = 0;
    this.sinceProbeBytes = 0;
    this.sinceProbeCommits = 0;
    this.base = this.budget > 0 ? this.probe() : undefined;
  }
}
