import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  LmdbEventLog,
  ReplayError,
  lineageOf,
  readTimeline,
  successorsOf,
  verifySession,
  type Divergence,
  type VerifyResult,
} from '@baton/runtime';
import type { CliIo } from '../cli-io.ts';
import { rewrittenRequests } from '../format/rewritten-requests.ts';
import { lineageLines } from '../format/lineage-lines.ts';
import { timelineHeader, timelineJson, timelineLine } from '../format/timeline-format.ts';
import { EXIT } from '../exit-codes.ts';

export interface ReplayOptions {
  readonly dataDir: string;
  readonly json: boolean;
  readonly verify: boolean;
}

/** Exit codes of `baton replay`. */
export const REPLAY_EXIT = { ok: EXIT.ok, divergence: EXIT.failed, notFound: EXIT.notFound } as const;

function valueAt(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function summary(r: VerifyResult): string {
  const snapshots = r.snapshots > 0 ? `, ${r.snapshots} snapshot${r.snapshots === 1 ? '' : 's'}` : '';
  return `${r.sessionEvents} session events, ${r.decisions} decisions${snapshots}, ${r.writers} writer${r.writers === 1 ? '' : 's'}`;
}

function printDivergence(io: CliIo, r: VerifyResult, d: Divergence): void {
  io.out(`divergence in ${d.stream} at seq ${d.seq}: ${d.reason}`);
  if (d.path !== null && d.path !== '') {
    io.out(`  first difference at ${d.path}`);
    io.out(`    expected: ${JSON.stringify(valueAt(d.expected, d.path)) ?? 'absent'}`);
    io.out(`    actual:   ${JSON.stringify(valueAt(d.actual, d.path)) ?? 'absent'}`);
  }
  io.out(`  expected (replayed): ${JSON.stringify(d.expected) ?? 'absent'}`);
  io.out(`  actual (recorded):   ${JSON.stringify(d.actual) ?? 'absent'}`);
  io.out(`verified ${summary(r)} before the divergence`);
}

/**
 * `baton replay <session>`: prints the session's timeline (readable, or NDJSON with `--json`), or with `--verify`
 * re-folds it and reports the first divergence. Exit 0 when fine, 1 on divergence, 2 for an unknown session or log.
 */
export async function runReplay(sessionId: string, options: ReplayOptions, io: CliIo): Promise<number> {
  const path = join(options.dataDir, 'events');
  if (!existsSync(path)) {
    io.err(`baton replay: no event log at ${path} (is --data-dir right?)`);
    return REPLAY_EXIT.notFound;
  }
  const log = LmdbEventLog.open({ path });
  try {
    if (options.verify) {
      const result = verifySession(log, sessionId);
      if (options.json) {
        io.out(JSON.stringify({ type: 'verify', ...result }));
      } else if (result.divergence === null) {
        io.out(`verified ${summary(result)}: no divergence`);
      } else {
        printDivergence(io, result, result.divergence);
      }
      return result.divergence === null ? REPLAY_EXIT.ok : REPLAY_EXIT.divergence;
    }
    const timeline = readTimeline(log, sessionId);
    const rewritten = rewrittenRequests(timeline);
    if (options.json) {
      for (const entry of timeline.entries) io.out(timelineJson(entry, rewritten));
    } else {
      for (const line of timelineHeader(timeline)) io.out(line);
      for (const line of lineageLines(lineageOf(log, sessionId), successorsOf(log, sessionId))) io.out(line);
      for (const entry of timeline.entries) io.out(timelineLine(entry, timeline, rewritten));
    }
    return REPLAY_EXIT.ok;
  } catch (err) {
    if (err instanceof ReplayError) {
      io.err(`baton replay: ${err.message}`);
      return REPLAY_EXIT.notFound;
    }
    throw err;
  } finally {
    await log.close();
  }
}
