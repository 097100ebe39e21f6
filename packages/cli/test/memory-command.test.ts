import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HistoryStore, commitFiles, fileVersions } from '@baton/memory-store';
import { EventLogCommitJournal, LmdbEventLog } from '@baton/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';
import { runBaton } from './helpers/run-baton.ts';

/*
 * Protects `baton memory log|diff|restore` over a real commit journal (LMDB event log) and history store built with
 * `commitFiles`, as the daemon's writers commit: through `main()` in-process, and `log` once through a real child.
 */

const SID = 'sess-1';
const CHECKPOINT = `sessions/${SID}/checkpoint.md`;
const MEMORY = 'projects/shop/MEMORY.md';
const SPILLOVER = 'projects/shop/MEMORY-payments.md';
const T0 = Date.UTC(2026, 2, 10, 9, 0, 0);

const CHECKPOINT_V1 = '# Checkpoint\n## §1 Active intent\nFix the discount bug.\n## §2 Decisions\n- none yet\n';
const CHECKPOINT_V2 = '# Checkpoint\n## §1 Active intent\nFix the discount bug.\n## §2 Decisions\n- snake_case columns\n- round half up\n';
const CHECKPOINT_V3 = '# Checkpoint\n## §1 Active intent\nAdd the receipt endpoint.\n## §2 Decisions\n- snake_case columns\n- round half up\n';
const MEMORY_V1 = '# Project memory\n- tests: npm test\n';
const MEMORY_V2 = '# Project memory\n- tests: npm test\n- discounts live in src/db/discounts-repo.ts\n';

let dataDir: string;

async function withJournal<T>(dir: string, body: (options: Parameters<typeof commitFiles>[0]) => Promise<T>): Promise<T> {
  const log = LmdbEventLog.open({ path: join(dir, 'events') });
  try {
    const base = { memoryRoot: join(dir, 'memory'), history: new HistoryStore(join(dir, 'history')), journal: new EventLogCommitJournal(log) };
    return await body({ ...base, commitId: '', writerId: null, reason: 'writer', at: 0 });
  } finally {
    await log.close();
  }
}

async function versionsOf(rel: string): Promise<{ version: number; reason: string; writerId: string | null }[]> {
  return await withJournal(dataDir, async (o) => await fileVersions(o.journal, rel));
}

async function baton(...args: string[]): Promise<{ code: number; stdout: string[]; stderr: string[] }> {
  const io = captureIo();
  const code = await main(['node', 'baton', 'memory', ...args], io, {});
  return { code, stdout: io.stdout, stderr: io.stderr };
}

function live(rel: string): string {
  return readFileSync(join(dataDir, 'memory', rel), 'utf8');
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'baton-memory-cli-'));
  await withJournal(dataDir, async (o) => {
    const commit = async (n: number, files: [string, string][]): Promise<void> => {
      await commitFiles({ ...o, commitId: `${SID}-w${n}`, writerId: `${SID}-w${n}`, at: T0 + (n - 1) * 60_000 }, new Map(files));
    };
    await commit(1, [
      [CHECKPOINT, CHECKPOINT_V1],
      [MEMORY, MEMORY_V1],
    ]);
    await commit(2, [[CHECKPOINT, CHECKPOINT_V2]]);
    await commit(3, [
      [CHECKPOINT, CHECKPOINT_V3],
      [MEMORY, MEMORY_V2],
      [SPILLOVER, '# Payments\n- retries capped at five\n'],
    ]);
  });
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('baton memory log', { timeout: 30_000 }, () => {
  it('lists every version of a session checkpoint with time, short hash, writer, size and the live marker (child process)', async () => {
    const run = await runBaton(['memory', 'log', SID, '--data-dir', dataDir]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${CHECKPOINT}: 3 versions (memory root ${join(dataDir, 'memory')})`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^ {2}v1 {2}2026-03-10T09:00:00\\.000Z {2}[0-9a-f]{12} {2}…-w1 {2}\\s*${Buffer.byteLength(CHECKPOINT_V1)} bytes$`)),
      expect.stringMatching(/^ {2}v2 {2}2026-03-10T09:01:00\.000Z {2}[0-9a-f]{12} {2}…-w2 .* bytes$/),
      expect.stringMatching(/^ {2}v3 {2}2026-03-10T09:02:00\.000Z {2}[0-9a-f]{12} {2}…-w3 .* bytes {2}← live$/),
    ]);
  });

  it('names a project memory by project:<id> and any committed file by its path; --json gives one object', async () => {
    const project = await baton('log', 'project:shop', '--data-dir', dataDir, '--json');
    expect(project.code).toBe(0);
    const parsed = JSON.parse(project.stdout.join('\n')) as { rel: string; versions: { version: number; writerId: string; bytes: number; live: boolean; time: string }[]; live: unknown };
    expect(parsed.rel).toBe(MEMORY);
    expect(parsed.versions.map((v) => [v.version, v.writerId, v.bytes, v.live])).toEqual([
      [1, `${SID}-w1`, Buffer.byteLength(MEMORY_V1), false],
      [2, `${SID}-w3`, Buffer.byteLength(MEMORY_V2), true],
    ]);
    expect(parsed.versions[1]?.time).toBe('2026-03-10T09:02:00.000Z');
    expect(parsed.live).toEqual({ state: 'current', version: 2 });

    const spill = await baton('log', SPILLOVER, '--data-dir', dataDir);
    expect(spill.code).toBe(0);
    expect(spill.stdout[0]).toMatch(/^projects\/shop\/MEMORY-payments\.md: 1 version /);
    // a writer of another session than the file's is shown in full
    expect(spill.stdout[1]).toContain(`${SID}-w3`);
  });
});

describe('baton memory diff', () => {
  it('prints a unified line diff between two versions', async () => {
    const run = await baton('diff', SID, '1', 'v2', '--data-dir', dataDir);
    expect(run.stderr).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toEqual([
      `--- ${CHECKPOINT} v1 (2026-03-10T09:00:00.000Z)`,
      `+++ ${CHECKPOINT} v2 (2026-03-10T09:01:00.000Z)`,
      '@@ -2,4 +2,5 @@',
      ' ## §1 Active intent',
      ' Fix the discount bug.',
      ' ## §2 Decisions',
      '-- none yet',
      '+- snake_case columns',
      '+- round half up',
    ]);
  });

  it('diffs against the live file by default, and prints nothing when they are equal', async () => {
    const same = await baton('diff', SID, '3', '--data-dir', dataDir);
    expect(same).toEqual({ code: 0, stdout: [], stderr: [] });
    const run = await baton('diff', 'project:shop', '1', '--data-dir', dataDir);
    expect(run.code).toBe(0);
    expect(run.stdout).toEqual([
      `--- ${MEMORY} v1 (2026-03-10T09:00:00.000Z)`,
      `+++ ${MEMORY} (live)`,
      '@@ -1,2 +1,3 @@',
      ' # Project memory',
      ' - tests: npm test',
      '+- discounts live in src/db/discounts-repo.ts',
    ]);
  });
});

describe('baton memory restore', () => {
  it('commits the chosen version again as a new version with reason restore, keeping the history', async () => {
    const run = await baton('restore', SID, '1', '--data-dir', dataDir);
    expect(run.stderr).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout[0]).toMatch(new RegExp(`^restored ${CHECKPOINT} to the content of v1 as v4 \\(commit restore-[0-9a-f-]{36}\\)$`));
    expect(live(CHECKPOINT)).toBe(CHECKPOINT_V1);
    expect((await versionsOf(CHECKPOINT)).map((v) => [v.version, v.reason, v.writerId])).toEqual([
      [1, 'writer', `${SID}-w1`],
      [2, 'writer', `${SID}-w2`],
      [3, 'writer', `${SID}-w3`],
      [4, 'restore', null],
    ]);
    const log = await baton('log', SID, '--data-dir', dataDir);
    expect(log.stdout[4]).toMatch(/^ {2}v4 {2}\S+ {2}[0-9a-f]{12} {2}restore .* bytes {2}← live$/);
    expect(log.stdout[1]).not.toContain('← live');
    expect((await baton('diff', SID, '1', '4', '--data-dir', dataDir)).stdout).toEqual([]);
    // the same again changes nothing
    const again = await baton('restore', SID, 'v4', '--data-dir', dataDir);
    expect(again.code).toBe(0);
    expect(again.stdout[0]).toContain('nothing to restore');
    expect(await versionsOf(CHECKPOINT)).toHaveLength(4);
  });

  it('warns when the live file was changed outside a commit, and restoring the newest version repairs it', async () => {
    writeFileSync(join(dataDir, 'memory', MEMORY), `${MEMORY_V2}- edited by hand\n`);
    const log = await baton('log', 'project:shop', '--data-dir', dataDir);
    expect(log.code).toBe(0);
    expect(log.stderr).toEqual([`warning: the live file ${MEMORY} was changed outside a commit: it matches no committed version`]);
    expect(log.stdout.some((l) => l.includes('← live'))).toBe(false);
    expect((await baton('diff', 'project:shop', '2', '--data-dir', dataDir)).stdout.slice(-2)).toEqual([' - discounts live in src/db/discounts-repo.ts', '+- edited by hand']);

    writeFileSync(join(dataDir, 'memory', MEMORY), MEMORY_V1);
    const older = await baton('log', 'project:shop', '--data-dir', dataDir);
    expect(older.stderr).toEqual([`warning: the live file ${MEMORY} was changed outside a commit: it matches v1, not the newest v2`]);
    expect(older.stdout[1]).toMatch(/← live$/);

    const restore = await baton('restore', 'project:shop', '2', '--data-dir', dataDir);
    expect(restore.code).toBe(0);
    expect(restore.stdout[0]).toContain('as v3');
    expect(live(MEMORY)).toBe(MEMORY_V2);
    expect((await baton('log', 'project:shop', '--data-dir', dataDir)).stderr).toEqual([]);
  });

  it('refuses while a daemon pid file names a live process, and ignores a stale one', async () => {
    const pidFile = join(dataDir, 'daemon.pid');
    try {
      writeFileSync(pidFile, `${process.pid}\n`);
      const refused = await baton('restore', SID, '2', '--data-dir', dataDir);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toEqual([expect.stringContaining(`a daemon seems to be running on ${dataDir} (pid ${process.pid}`)]);
      expect(await versionsOf(CHECKPOINT)).toHaveLength(4);

      const exited = spawnSync(process.execPath, ['-e', '']);
      writeFileSync(pidFile, `${exited.pid}\n`);
      const restored = await baton('restore', SID, '2', '--data-dir', dataDir);
      expect(restored.code).toBe(0);
      expect(live(CHECKPOINT)).toBe(CHECKPOINT_V2);
    } finally {
      rmSync(pidFile, { force: true });
    }
  });
});

describe('baton memory errors', () => {
  it('exits 2 with one line for an unknown scope, version or data directory', async () => {
    const cases: [string[], string][] = [
      [['log', 'no-such-session'], 'no committed version of sessions/no-such-session/checkpoint.md (committed files: projects/shop/MEMORY-payments.md'],
      [['log', 'project:nope'], 'no committed version of projects/nope/MEMORY.md'],
      [['log', 'bad id!'], 'is neither a session id, project:<id> nor a path relative to the memory root'],
      [['log', '../../etc/passwd'], 'is not inside the memory root'],
      [['diff', SID, '9'], `no version 9 of ${CHECKPOINT} (versions 1–5`],
      [['diff', SID, '1', 'x'], `no version x of ${CHECKPOINT}`],
      [['restore', SID, '0'], `no version 0 of ${CHECKPOINT}`],
    ];
    for (const [args, message] of cases) {
      const run = await baton(...args, '--data-dir', dataDir);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout).toEqual([]);
      expect(run.stderr).toEqual([expect.stringContaining(message)]);
      expect(run.stderr[0]).toMatch(/^baton memory (log|diff|restore): /);
    }
    const missing = await baton('log', SID, '--data-dir', join(dataDir, 'nowhere'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toEqual([expect.stringContaining('no event log at')]);
  });
});
