import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LmdbEventLog, MemoryEventLog, verifySession } from '@baton/runtime';
import { type EventLog } from '@baton/log-schema';
import { describe, expect, it } from 'vitest';
import { BATON_SOURCE_ARGS } from '../packages/cli/test/helpers/run-baton.ts';

/**
 * Recorded real event logs (test/fixtures/logs, made by record-logs.ts) replayed through today's machines: a change of
 * machine behaviour that would decide differently on a recorded history fails here (Temporal-style history replay).
 */
const DIR = fileURLToPath(new URL('./fixtures/logs/', import.meta.url));
const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.ndjson'));

interface Line {
  stream: string;
  seq: number;
  type: string;
  at: number;
  payload: unknown;
  msgId?: string;
}

async function load(log: EventLog, file: string): Promise<string> {
  const lines = readFileSync(join(DIR, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
  for (const stream of new Set(lines.map((l) => l.stream))) {
    const records = lines.filter((l) => l.stream === stream).sort((x, y) => x.seq - y.seq);
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    await log.append(stream, records.map((r) => ({ type: r.type, at: r.at, payload: r.payload, ...(r.msgId !== undefined ? { msgId: r.msgId } : {}) })));
  }
  const session = lines.find((l) => l.type === 'session.opened');
  if (session === undefined) throw new Error(`${file}: no session.opened`);
  return session.stream.slice('session/'.length);
}

describe('recorded event logs', () => {
  it('has fixtures to replay', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(2);
  });

  it.each(fixtures)('%s re-folds without divergence', async (file) => {
    const log = new MemoryEventLog();
    const sid = await load(log, file);
    const result = verifySession(log, sid);
    expect(result.divergence).toBeNull();
    expect(result.decisions).toBeGreaterThan(3);
    expect(result.writers).toBeGreaterThanOrEqual(1);
  });

  it('baton replay --verify passes on a recorded log in LMDB', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-recorded-'));
    try {
      const log = LmdbEventLog.open({ path: join(dir, 'events') });
      const sid = await load(log, fixtures[0]!);
      await log.close();
      const run = spawnSync(process.execPath, [...BATON_SOURCE_ARGS, 'replay', sid, '--data-dir', dir, '--verify'], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/no divergence/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
