import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEventLog, ReplayError, readTimeline, verifySession } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyLog, recordSession } from './helpers/record-session.ts';

/*
 * Protects the determinism check behind `baton replay --verify`: a log written by a real daemon re-folds without
 * divergence, and a forged or damaged record is reported at its own stream and seq.
 */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-verify-'));
  dirs.push(dir);
  return dir;
}

let recorded: string;
let sessionId: string;

beforeAll(async () => {
  recorded = tempDir();
  ({ sessionId } = await recordSession(recorded));
}, 60_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function withLog<T>(dataDir: string, fn: (log: LmdbEventLog) => T): Promise<T> {
  const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
  return Promise.resolve()
    .then(() => fn(log))
    .finally(() => log.close());
}

describe('verifySession on a log written by a real daemon', () => {
  it('re-folds the session and its writer without divergence', async () => {
    const result = await withLog(recorded, (log) => verifySession(log, sessionId));
    expect(result.divergence).toBeNull();
    expect(result.sessionEvents).toBeGreaterThanOrEqual(7); // 6 appends + the writer's settlement
    expect(result.decisions).toBeGreaterThanOrEqual(6);
    expect(result.writers).toBeGreaterThanOrEqual(1);
  });

  it('reads a timeline holding the session stream and the writer stream in time order', async () => {
    const timeline = await withLog(recorded, (log) => readTimeline(log, sessionId));
    expect(timeline.writerIds[0]).toBe(`${sessionId}-w1`);
    expect(timeline.entries[0]?.type).toBe('session.opened');
    const writer = timeline.entries.filter((e) => e.writerId === `${sessionId}-w1`);
    expect(writer[0]?.type).toBe('writer.started');
    expect(writer.map((e) => e.seq)).toEqual(writer.map((_, i) => i + 1));
    const settledAt = timeline.entries.findIndex((e) => e.writerId === null && e.type === 'writer.settled');
    const startedAt = timeline.entries.findIndex((e) => e.writerId !== null && e.type === 'writer.started');
    expect(startedAt).toBeGreaterThan(0);
    expect(settledAt).toBeGreaterThan(startedAt);
  });

  it('throws not_found for an unknown session', async () => {
    await withLog(recorded, (log) => {
      expect(() => verifySession(log, 'no-such-session')).toThrow(ReplayError);
      expect(() => readTimeline(log, 'no-such-session')).toThrow(/unknown session no-such-session/);
    });
  });
});

describe('verifySession on a tampered log', () => {
  it('reports a forged decision at its seq, with the differing path', async () => {
    const dir = tempDir();
    await copyLog(recorded, dir, (_stream, r) => r);
    const stream = `session/${sessionId}`;
    const log = LmdbEventLog.open({ path: join(dir, 'events') });
    try {
      const decision = [...log.read(stream)].find((r) => r.type === 'decision');
      expect(decision).toBeDefined();
      const payload = decision?.payload as { for: number; state: Record<string, unknown>; effects: unknown[] };
      const [forged] = await log.append(stream, [
        { type: 'decision', at: Date.now(), payload: { ...payload, state: { ...payload.state, watermark: 'm999' } } },
      ]);
      const result = verifySession(log, sessionId);
      expect(result.divergence).toMatchObject({ stream, seq: forged?.seq, path: 'state.watermark' });
      expect((result.divergence?.actual as { state: { watermark: string } }).state.watermark).toBe('m999');
      expect((result.divergence?.expected as { state: { watermark: unknown } }).state.watermark).toBe(payload.state['watermark']);
    } finally {
      await log.close();
    }
  });

  it('reports a decision whose recorded effects were altered in a rewritten log', async () => {
    const dir = tempDir();
    let alteredSeq = 0;
    await copyLog(recorded, dir, (stream, r) => {
      if (stream !== `session/${sessionId}` || r.type !== 'decision' || alteredSeq !== 0) return r;
      const payload = r.payload as { effects: unknown[] };
      alteredSeq = r.seq;
      return { ...r, payload: { ...payload, effects: [...payload.effects, { kind: 'publish', event: { type: 'writer.queued' } }] } };
    });
    const result = await withLog(dir, (log) => verifySession(log, sessionId));
    expect(alteredSeq).toBeGreaterThan(0);
    expect(result.divergence).toMatchObject({ stream: `session/${sessionId}`, seq: alteredSeq });
  });

  it('reports a writer stream that lost its last records while the session recorded a success', async () => {
    const dir = tempDir();
    const writerStream = `writer/${sessionId}-w1`;
    // The commit and the final snapshot after it are gone.
    await copyLog(recorded, dir, (stream, r) => (stream === writerStream && (r.type === 'commit.completed' || r.type === 'snapshot') ? null : r));
    const result = await withLog(dir, (log) => verifySession(log, sessionId));
    const settled = await withLog(recorded, (log) => [...log.read(`session/${sessionId}`)].find((r) => r.type === 'writer.settled'));
    expect(result.divergence).toMatchObject({ stream: `session/${sessionId}`, seq: settled?.seq, expected: { outcome: 'cancelled' } });
    expect((result.divergence?.actual as { outcome: string }).outcome).toBe('success');
  });

  it('reports a writer snapshot that is not the state its events re-fold to', async () => {
    const dir = tempDir();
    const writerStream = `writer/${sessionId}-w1`;
    let snapshotSeq = 0;
    await copyLog(recorded, dir, (stream, r) => {
      if (stream !== writerStream || r.type !== 'snapshot') return r;
      snapshotSeq = r.seq;
      const payload = r.payload as { state: { value: unknown; context: Record<string, unknown> } };
      return { ...r, payload: { ...payload, state: { ...payload.state, context: { ...payload.state.context, reentries: 3 } } } };
    });
    const result = await withLog(dir, (log) => verifySession(log, sessionId));
    expect(snapshotSeq).toBeGreaterThan(0);
    expect(result.divergence).toMatchObject({ stream: writerStream, seq: snapshotSeq, path: 'context.reentries' });
  });

  it('accepts a log whose last decision is missing (decisions are derived)', async () => {
    const dir = tempDir();
    const stream = `session/${sessionId}`;
    // Decisions ride with the next input: the newest one may be missing after a crash.
    const last = await withLog(recorded, (log) => [...log.read(stream)].filter((r) => r.type === 'decision').at(-1));
    expect(last?.type).toBe('decision');
    await copyLog(recorded, dir, (s, r) => (s === stream && r.seq === last?.seq ? null : r));
    const result = await withLog(dir, (log) => verifySession(log, sessionId));
    expect(result.divergence).toBeNull();
  });
});
