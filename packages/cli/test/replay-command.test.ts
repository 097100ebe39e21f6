import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbEventLog } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSession } from './helpers/record-session.ts';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { runBaton } from './helpers/run-baton.ts';

/*
 * Protects `baton replay` as a user runs it, over a log written by a real daemon: `--verify` and `--json` through a
 * real child process (`baton` from its sources through tsx), the other cases through `main()` in-process (same code, no
 * tsx start-up).
 */

async function replay(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = captureIo();
  const code = await main(['node', 'baton', 'replay', ...args], io, {});
  return { code, stdout: io.stdout.map((l) => `${l}\n`).join(''), stderr: io.stderr.map((l) => `${l}\n`).join('') };
}

let dataDir: string;
let sessionId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'baton-replay-cli-'));
  ({ sessionId } = await recordSession(dataDir));
}, 60_000);

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

// Cases that spawn `baton` from its sources (tsx compiles on start): allow for a slow, busy CI machine.
describe('baton --help', { timeout: 30_000 }, () => {
  it('lists the commands and exits 0', async () => {
    const run = await runBaton(['--help']);
    expect(run.code).toBe(0);
    for (const command of ['daemon', 'demo', 'replay', 'memory']) expect(run.stdout).toContain(command);
  });

  it('documents the daemon options', async () => {
    const io = captureIo();
    expect(await main(['node', 'baton', 'daemon', '--help'], io, {})).toBe(0);
    const run = { stdout: io.stdout.join('\n') };
    for (const option of ['--nats', '--data-dir', '--pool-size', '--writer-model', '--prefix', '--log-level', 'OPENAI_BASE_URL']) {
      expect(run.stdout).toContain(option);
    }
  });
});

describe('baton replay', { timeout: 30_000 }, () => {
  it('--verify re-folds the recorded session and exits 0', async () => {
    const run = await runBaton(['replay', sessionId, '--data-dir', dataDir, '--verify']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^verified \d+ session events, \d+ decisions, 1 writer: no divergence\n$/);
  });

  it('--json prints one JSON object per record of the session and writer streams', async () => {
    const run = await runBaton(['replay', sessionId, '--data-dir', dataDir, '--json']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const records = lines.map((line) => JSON.parse(line) as { stream: string; seq: number; type: string; at: number });
    expect(records[0]).toMatchObject({ stream: `session/${sessionId}`, seq: 1, type: 'session.opened' });
    expect(records.some((r) => r.stream === `writer/${sessionId}-w1` && r.type === 'writer.started')).toBe(true);
    expect(records.some((r) => r.type === 'model.replied')).toBe(true);
    const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
    try {
      const total = log.lastSeq(`session/${sessionId}`) + log.lastSeq(`writer/${sessionId}-w1`);
      expect(records).toHaveLength(total);
    } finally {
      await log.close();
    }
  });

  it('prints a readable timeline with crossings, writer calls and the settlement', async () => {
    const run = await replay(sessionId, '--data-dir', dataDir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`session ${sessionId}`);
    expect(run.stdout).toMatch(/threshold 1 000 crossed at [\d ]+ tokens/);
    expect(run.stdout).toMatch(/writer\.started\s+(fork|delta) mode, covers up to m\d+/);
    expect(run.stdout).toMatch(/model\.replied\s+usage prompt [\d ]+ \/ completion [\d ]+ \/ cached [\d ]+/);
    expect(run.stdout).toMatch(/validation\.completed\s+valid/);
    expect(run.stdout).toMatch(/writer\.settled\s+…-w1 success/);
  });

  it('exits 1 at the first divergence of a tampered log, naming stream and seq', async () => {
    const tampered = mkdtempSync(join(tmpdir(), 'baton-replay-tampered-'));
    try {
      const log = LmdbEventLog.open({ path: join(tampered, 'events') });
      const source = LmdbEventLog.open({ path: join(dataDir, 'events') });
      let forgedSeq = 0;
      try {
        for (const stream of [...source.streams()]) await log.append(stream, [...source.read(stream)]);
        const stream = `session/${sessionId}`;
        const decision = [...log.read(stream)].find((r) => r.type === 'decision');
        const payload = decision?.payload as { state: Record<string, unknown> };
        const [forged] = await log.append(stream, [{ type: 'decision', at: Date.now(), payload: { ...payload, state: { ...payload.state, tokens: 123_456 } } }]);
        forgedSeq = forged?.seq ?? 0;
      } finally {
        await source.close();
        await log.close();
      }
      const run = await replay(sessionId, '--data-dir', tampered, '--verify');
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`divergence in session/${sessionId} at seq ${forgedSeq}`);
      expect(run.stdout).toContain('first difference at state.tokens');
      expect(run.stdout).toMatch(/actual:\s+123456/);
    } finally {
      rmSync(tampered, { recursive: true, force: true });
    }
  });

  it('exits 2 for an unknown session and for a missing log', async () => {
    const unknown = await replay('no-such-session', '--data-dir', dataDir, '--verify');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown session no-such-session');
    const missing = await replay(sessionId, '--data-dir', join(dataDir, 'nowhere'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no event log');
  });
});
