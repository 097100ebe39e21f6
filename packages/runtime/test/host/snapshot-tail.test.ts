import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SessionEffect } from '@baton/actors';
import {
  SESSION_RECORDS,
  SNAPSHOT_KEY,
  checkRecord,
  sessionLog,
  sessionStream,
  type SessionSetup,
  type SessionSnapshot,
  type StoredSessionRecord,
} from '@baton/log-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSessionLoad } from '../../src/daemon/session-load.ts';
import { LmdbEventLog } from '../../src/event-log/lmdb-event-log.ts';
import { HostedSession, sessionEventOf } from '../../src/host/session-host.ts';
import type { SessionSummary } from '../../src/host/worker-messages.ts';
import { makeTempDir, removeDir } from '../event-log/temp-dir.ts';

/**
 * Loading a session from a snapshot and the inputs after it must give exactly the state a full re-fold gives: for
 * every recorded real log (test/fixtures/logs) and every input position k, the state after k inputs is written to an
 * LMDB log as a `snapshot` record (as the daemon writes it), read back the way the daemon loads a session, restored,
 * and folded on; at every later step its snapshot, summary and effects equal the full re-fold's.
 */
const DIR = fileURLToPath(new URL('../../../../test/fixtures/logs/', import.meta.url));
const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.ndjson'));

interface Line {
  stream: string;
  seq: number;
  type: string;
  at: number;
  payload: unknown;
  msgId?: string;
}

interface Recorded {
  readonly sessionId: string;
  readonly setup: SessionSetup;
  /** The session stream as recorded, checked against its schema. */
  readonly records: StoredSessionRecord[];
}

function readFixture(file: string): Recorded {
  const lines = readFileSync(join(DIR, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Line);
  const opened = lines.find((l) => l.type === 'session.opened');
  if (opened === undefined) throw new Error(`${file}: no session.opened`);
  const records = lines
    .filter((l) => l.stream === opened.stream)
    .sort((a, b) => a.seq - b.seq)
    .map((l) => checkRecord(SESSION_RECORDS, { v: 1, stream: l.stream, seq: l.seq, type: l.type, at: l.at, payload: l.payload }));
  const first = records[0];
  if (first?.type !== 'session.opened') throw new Error(`${file}: the session stream does not start with session.opened`);
  return { sessionId: opened.stream.slice('session/'.length), setup: first.payload.setup, records };
}

/** What one fold produced, and the host's state after it (cloned: later folds must not change what was taken). */
interface Step {
  readonly seq: number;
  readonly summary: SessionSummary;
  readonly effects: readonly SessionEffect[];
  readonly snapshot: SessionSnapshot;
}

function fold(session: HostedSession, record: StoredSessionRecord): Step {
  const { summary, effects } = session.fold(record);
  return structuredClone({ seq: record.seq, summary, effects, snapshot: session.toSnapshot() });
}

describe.each(fixtures)('snapshot + tail of %s', (file) => {
  const recorded = readFixture(file);
  const inputs = recorded.records.filter((r) => sessionEventOf(r) !== null);
  /** `full[k]`: the state after the first k inputs of a fold from `session.opened`. */
  const full: Step[] = [];
  let dir: string;
  let log: LmdbEventLog;

  beforeAll(() => {
    const hosted = new HostedSession(recorded.setup);
    full.push(structuredClone({ seq: 1, summary: hosted.fold(recorded.records[0] as StoredSessionRecord).summary, effects: [], snapshot: hosted.toSnapshot() }));
    for (const record of inputs) full.push(fold(hosted, record));
    dir = makeTempDir('baton-snapshot-tail-');
    log = LmdbEventLog.open({ path: join(dir, 'events') });
  });
  afterAll(async () => {
    await log.close();
    removeDir(dir);
  });

  it('has inputs that change the state, a writer and a non-trivial host state to carry', () => {
    expect(inputs.length).toBeGreaterThanOrEqual(4);
    // Consecutive states differ: a restore that dropped the snapshot would be caught at every k.
    for (let k = 1; k < full.length; k++) expect(full[k]?.snapshot).not.toStrictEqual(full[k - 1]?.snapshot);
    expect(full.some((s) => s.effects.some((e) => e.kind === 'writer.start'))).toBe(true);
    expect(full.some((s) => s.snapshot.host.lastSettledAt !== null)).toBe(true);
    if (inputs.some((r) => r.type === 'rebuild.rendered')) {
      // The boundary message Baton inserted and the cleared tool outputs live only in the host's state.
      expect(full.some((s) => s.snapshot.host.inserted.length > 0 && s.snapshot.host.cleared.length > 0)).toBe(true);
    }
  });

  it('restores the state after every input k from a logged snapshot and folds the rest like the full re-fold', async () => {
    const sessions = sessionLog(log);
    for (let k = 0; k < full.length; k++) {
      const at = full[k] as Step;
      // A stream per k: the recorded stream as it is, then an older snapshot and the snapshot of the state after k
      // inputs (as the daemon appends them, riding with later records), each registered under the snapshot key.
      const id = `${recorded.sessionId}-k${k}`;
      const older = full[Math.max(0, k - 1)] as Step;
      const last = recorded.records.at(-1)?.at ?? 0;
      await log.append(
        sessionStream(id),
        recorded.records.map((r) => ({ type: r.type, at: r.at, payload: r.payload })),
      );
      await sessions.append(id, [
        { type: 'snapshot', at: last, payload: older.snapshot, keys: [SNAPSHOT_KEY] },
        { type: 'snapshot', at: last, payload: at.snapshot, keys: [SNAPSHOT_KEY] },
      ]);

      const load = readSessionLoad(sessions, log, id);
      if (load === null) throw new Error(`${id}: no session.opened`);
      // The newest snapshot came back through the log's codec unchanged, and loading reads only the inputs after it.
      expect(load.snapshot).toStrictEqual(at.snapshot);
      expect(load.records.map((r) => r.seq)).toEqual(inputs.slice(k).map((r) => r.seq));

      const restored = new HostedSession(load.setup, load.snapshot);
      expect(structuredClone(restored.toSnapshot())).toStrictEqual(at.snapshot);
      for (const [j, record] of load.records.entries()) {
        const step = fold(restored, record);
        const expected = full[k + j + 1] as Step;
        expect(step.seq).toBe(expected.seq);
        expect(step.summary, `${file}: k=${k}, input ${k + j + 1} (seq ${record.seq})`).toStrictEqual(expected.summary);
        expect(step.effects, `${file}: k=${k}, input ${k + j + 1} (seq ${record.seq})`).toStrictEqual(expected.effects);
        expect(step.snapshot, `${file}: k=${k}, input ${k + j + 1} (seq ${record.seq})`).toStrictEqual(expected.snapshot);
      }
      expect(structuredClone(restored.toSnapshot())).toStrictEqual(full.at(-1)?.snapshot);
    }
  });
});
