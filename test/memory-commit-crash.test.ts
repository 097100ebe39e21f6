import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HistoryStore, contentHash, fileVersions, recoverCommits, unappliedCommits } from '@baton/memory-store';
import { EventLogCommitJournal, LmdbEventLog } from '@baton/runtime';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILES } from './fixtures/commit-child.ts';

const CHILD = fileURLToPath(new URL('./fixtures/commit-child.ts', import.meta.url));
const RUNS = 50;

/** Starts the committing child, waits until it committed once, lets it run `delayMs`, then SIGKILLs it. */
function runAndKill(dataDir: string, start: number, delayMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@baton/source', '--import', 'tsx', CHILD, dataDir, String(start)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('ready')) setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.once('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${String(code)}: ${err}`))));
  });
}

describe('memory commit under SIGKILL', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'baton-commit-crash-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it(`always leaves one consistent committed set matching the log (${RUNS} kills at random points)`, async () => {
    const delays = fc.sample(fc.integer({ min: 0, max: 60 }), { numRuns: RUNS, seed: 20261201 });
    let start = 1;
    let midCommit = 0;
    for (const delay of delays) {
      await runAndKill(dataDir, start, delay);
      start += 10_000;
      const log = LmdbEventLog.open({ path: join(dataDir, 'events') });
      try {
        const journal = new EventLogCommitJournal(log);
        if ((await unappliedCommits(journal)).length > 0) midCommit++;
        await recoverCommits({ memoryRoot: join(dataDir, 'memory'), history: new HistoryStore(join(dataDir, 'history')), journal });
        expect(await unappliedCommits(journal)).toEqual([]);
        const commits = new Set<string>();
        for (const rel of FILES) {
          const live = await readFile(join(dataDir, 'memory', rel), 'utf8');
          commits.add(/^commit (\d+)$/m.exec(live)?.[1] ?? 'none');
          // The live file is exactly the newest version the log records for it.
          const versions = await fileVersions(journal, rel);
          expect(contentHash(live)).toBe(versions.at(-1)?.hash);
        }
        // Old or new, never a mix: every file comes from the same commit.
        expect(commits.size).toBe(1);
      } finally {
        await log.close();
      }
    }
    // The random kills must actually land inside commits for the test to mean something.
    expect(midCommit).toBeGreaterThan(0);
  }, 240_000);
});
