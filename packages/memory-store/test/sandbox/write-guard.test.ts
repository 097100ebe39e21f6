import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMemoryWrite } from '../../src/sandbox/write-guard.ts';
import { type MemoryActor, type WriteRule, allowedWritePaths } from '../../src/sandbox/write-rules.ts';

// One real tree for the whole table, built once: the guard only reads the filesystem.
let base: string;
let root: string;

const P = 'parent-session';
const Q = 'other-session';
const PID = 'demo-shop';
const writer: MemoryActor = { kind: 'writer', sessionId: P, projectId: PID };
const main: MemoryActor = { kind: 'main', sessionId: P, projectId: PID };
const subagent: MemoryActor = { kind: 'subagent', sessionId: P, projectId: PID, taskId: 'T4' };

beforeAll(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'baton-guard-'));
  root = path.join(base, 'memory');
  const dirs = [
    `sessions/${P}/tasks/T4`,
    `sessions/${P}/tasks/T5`,
    `sessions/${Q}/tasks/T4`,
    `projects/${PID}`,
    'projects/other-project',
    'global',
  ];
  for (const dir of dirs) await mkdir(path.join(root, dir), { recursive: true });
  for (const file of [
    `sessions/${P}/checkpoint.md`,
    `sessions/${P}/notes.md`,
    `sessions/${Q}/checkpoint.md`,
    `sessions/${Q}/notes.md`,
    `projects/${PID}/MEMORY.md`,
    'projects/other-project/MEMORY.md',
    'global/MEMORY.md',
  ]) {
    await writeFile(path.join(root, file), 'x\n');
  }
  await mkdir(path.join(base, 'outside'));
  await mkdir(path.join(base, 'log'));
  await mkdir(path.join(base, 'memory-evil', 'sessions', P), { recursive: true });
  await writeFile(path.join(base, 'outside', 'existing.md'), 'outside\n');

  const link = (to: string, from: string) => symlink(to, path.join(root, from));
  await link(path.join(base, 'outside', 'existing.md'), `sessions/${P}/checkpoint-out.md`);
  await link(path.join(base, 'outside', 'not-yet.md'), `sessions/${P}/checkpoint-dangling.md`);
  await link(path.join(base, 'outside'), `sessions/${P}/linkdir`);
  await link(path.join(root, 'sessions', Q, 'checkpoint.md'), `sessions/${P}/checkpoint-q.md`);
  await link(`../../../${Q}/notes.md`, `sessions/${P}/tasks/T4/esc.md`);
  await link(path.join(root, 'projects', 'other-project', 'MEMORY.md'), `projects/${PID}/MEMORY-link.md`);
  await link('notes.md', `sessions/${P}/notes-alias.md`);
  await link(P, 'sessions/alias-of-parent');
  await link('loop2', `sessions/${P}/loop1`);
  await link('loop1', `sessions/${P}/loop2`);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const inRoot = (...parts: string[]) => () => path.join(root, ...parts);
const session = (...parts: string[]) => inRoot('sessions', P, ...parts);
const project = (...parts: string[]) => inRoot('projects', PID, ...parts);
const raw = (make: () => string) => make;

type Row = readonly [label: string, actor: MemoryActor, target: () => string, expected: 'allow' | WriteRule, canonical?: () => string];

const rows: Row[] = [
  // Writer: the five allowed shapes, and non-canonical spellings of them.
  ['writer checkpoint.md', writer, session('checkpoint.md'), 'allow'],
  ['writer checkpoint spillover', writer, session('checkpoint-auth.md'), 'allow'],
  ['writer spillover with _ and -', writer, session('checkpoint-api_v2-x.md'), 'allow'],
  ['writer notes.md', writer, session('notes.md'), 'allow'],
  ['writer MEMORY.md', writer, project('MEMORY.md'), 'allow'],
  ['writer MEMORY spillover', writer, project('MEMORY-rules.md'), 'allow'],
  ['writer .. inside the tree', writer, raw(() => `${root}/sessions/${P}/tasks/../checkpoint.md`), 'allow', session('checkpoint.md')],
  ['writer // form', writer, raw(() => `${root}//sessions//${P}///notes.md`), 'allow', session('notes.md')],
  ['writer /./ form', writer, raw(() => `${root}/sessions/${P}/./checkpoint.md`), 'allow', session('checkpoint.md')],
  ['writer .. through an outside dir back in', writer, raw(() => `${base}/log/../memory/sessions/${P}/checkpoint.md`), 'allow', session('checkpoint.md')],
  ['writer via a dir symlink onto its own session', writer, inRoot('sessions', 'alias-of-parent', 'checkpoint.md'), 'allow', session('checkpoint.md')],
  // Writer: case variants.
  ['writer Checkpoint.md', writer, session('Checkpoint.md'), 'name-case'],
  ['writer CHECKPOINT.md', writer, session('CHECKPOINT.md'), 'name-case'],
  ['writer NOTES.md', writer, session('NOTES.md'), 'name-case'],
  ['writer memory.md (legacy lower case)', writer, project('memory.md'), 'name-case'],
  ['writer MEMORY.MD', writer, project('MEMORY.MD'), 'name-case'],
  ['writer Memory-rules.md', writer, project('Memory-rules.md'), 'name-case'],
  ['writer checkpoint.Md', writer, session('checkpoint.Md'), 'name-case'],
  // Writer: other names in its own directories.
  ['writer non-.md checkpoint.txt', writer, session('checkpoint.txt'), 'not-markdown'],
  ['writer extensionless checkpoint', writer, session('checkpoint'), 'not-markdown'],
  ['writer scratch.md', writer, session('scratch.md'), 'writer-allowlist'],
  ['writer session progress.md', writer, session('progress.md'), 'writer-allowlist'],
  ['writer empty topic', writer, session('checkpoint-.md'), 'writer-allowlist'],
  ['writer dotted topic', writer, session('checkpoint-a.b.md'), 'writer-allowlist'],
  ['writer 81-character topic', writer, session(`checkpoint-${'t'.repeat(81)}.md`), 'writer-allowlist'],
  ['writer quarantine file', writer, session('checkpoint.invalid.md'), 'writer-allowlist'],
  ['writer nested checkpoint dir', writer, session('checkpoint', 'snapshot.md'), 'writer-allowlist'],
  ['writer pinned.md in project', writer, project('pinned.md'), 'writer-allowlist'],
  ['writer MEMORY.md in a project subdir', writer, project('sub', 'MEMORY.md'), 'writer-allowlist'],
  ['writer tasks/ journal', writer, session('tasks', 'T1', 'progress.md'), 'tasks-reserved'],
  ['writer tasks/ sub-task file', writer, session('tasks', 'T1.2', 'notes.md'), 'tasks-reserved'],
  // Writer: other sessions, projects, scopes.
  ["writer other session's checkpoint", writer, inRoot('sessions', Q, 'checkpoint.md'), 'other-session'],
  ['writer .. hop into another session', writer, raw(() => `${root}/sessions/${P}/../${Q}/notes.md`), 'other-session'],
  ['writer // form into another session', writer, raw(() => `${root}//sessions//${Q}/checkpoint.md`), 'other-session'],
  ["writer other project's MEMORY.md", writer, inRoot('projects', 'other-project', 'MEMORY.md'), 'other-project'],
  ['writer symlink into another project', writer, project('MEMORY-link.md'), 'other-project'],
  ['writer symlink into another session', writer, session('checkpoint-q.md'), 'other-session'],
  ['writer global memory', writer, inRoot('global', 'MEMORY.md'), 'global-read-only'],
  ['writer file at the root', writer, inRoot('MEMORY.md'), 'unknown-scope'],
  ['writer unknown top-level dir', writer, inRoot('logs', 'x.md'), 'unknown-scope'],
  ['writer the root itself', writer, inRoot(), 'unknown-scope'],
  ['writer the session dir itself', writer, session(), 'unknown-scope'],
  // Escapes out of the root.
  ['writer sibling prefix memory-evil', writer, raw(() => `${base}/memory-evil/sessions/${P}/checkpoint.md`), 'memory-root'],
  ['writer sibling prefix via ..', writer, raw(() => `${root}/../memory-evil/x.md`), 'memory-root'],
  ['writer <root>-evil spelled from the root string', writer, raw(() => `${root}-evil/projects/${PID}/MEMORY.md`), 'memory-root'],
  ['writer .. just above the root', writer, raw(() => `${root}/../secret.md`), 'memory-root'],
  ['writer deep .. escape', writer, raw(() => `${root}/sessions/${P}/../../../../../../etc/passwd`), 'memory-root'],
  ['writer /etc/passwd', writer, raw(() => '/etc/passwd'), 'memory-root'],
  ['writer symlinked file out of the tree', writer, session('checkpoint-out.md'), 'memory-root'],
  ['writer dangling symlink out of the tree', writer, session('checkpoint-dangling.md'), 'memory-root'],
  ['writer symlinked dir out of the tree', writer, session('linkdir', 'checkpoint.md'), 'memory-root'],
  ['writer symlink loop', writer, session('loop1', 'x.md'), 'symlink-loop'],
  // Malformed targets.
  ['writer relative path', writer, raw(() => `sessions/${P}/checkpoint.md`), 'absolute-path'],
  ['writer relative .. path', writer, raw(() => `../memory/sessions/${P}/checkpoint.md`), 'absolute-path'],
  ['writer ./ path', writer, raw(() => './checkpoint.md'), 'absolute-path'],
  ['writer empty path', writer, raw(() => ''), 'absolute-path'],
  ['writer NUL byte', writer, raw(() => `${root}/sessions/${P}/checkpoint.md\0.txt`), 'nul-byte'],
  ['writer 256-byte segment', writer, session(`${'a'.repeat(253)}.md`), 'segment-too-long'],
  ['writer 131-character segment of 259 bytes', writer, session(`${'é'.repeat(128)}.md`), 'segment-too-long'],
  ['writer path over 4096 bytes', writer, session(...Array.from({ length: 21 }, () => 'd'.repeat(200)), 'x.md'), 'path-too-long'],
  // Main agent.
  ['main notes.md', main, session('notes.md'), 'allow'],
  ['main free key', main, session('scratch.md'), 'allow'],
  ['main free key progress.md', main, session('progress.md'), 'allow'],
  ['main symlink onto its notes', main, session('notes-alias.md'), 'allow', session('notes.md')],
  ['main // form', main, raw(() => `${root}/sessions//${P}//scratch.md`), 'allow', session('scratch.md')],
  ['main checkpoint.md', main, session('checkpoint.md'), 'writer-owned-file'],
  ['main Checkpoint.md', main, session('Checkpoint.md'), 'writer-owned-file'],
  ['main checkpoint spillover', main, session('checkpoint-auth.md'), 'writer-owned-file'],
  ['main quarantine file', main, session('checkpoint.invalid.md'), 'writer-owned-file'],
  ['main NOTES.md', main, session('NOTES.md'), 'name-case'],
  ['main scratch.MD', main, session('scratch.MD'), 'name-case'],
  ['main MEMORY.md', main, project('MEMORY.md'), 'writer-owned-file'],
  ['main memory.md', main, project('memory.md'), 'writer-owned-file'],
  ['main project free file', main, project('pinned.md'), 'main-session-only'],
  ['main tasks/ journal', main, session('tasks', 'T1', 'progress.md'), 'tasks-reserved'],
  ['main tasks/ via .. from its session', main, raw(() => `${root}/sessions/${P}/x/../tasks/T4/progress.md`), 'tasks-reserved'],
  ['main nested dir', main, session('sub', 'x.md'), 'main-session-only'],
  ['main dotted key', main, session('my.key.md'), 'invalid-key'],
  ['main non-.md', main, session('scratch.txt'), 'not-markdown'],
  ["main other session's free key", main, inRoot('sessions', Q, 'scratch.md'), 'other-session'],
  ['main global memory', main, inRoot('global', 'MEMORY.md'), 'global-read-only'],
  ['main sibling prefix', main, raw(() => `${base}/memory-evil/x.md`), 'memory-root'],
  // Subagent bound to T4.
  ['subagent progress.md', subagent, session('tasks', 'T4', 'progress.md'), 'allow'],
  ['subagent nested file', subagent, session('tasks', 'T4', 'sub', 'spec.md'), 'allow'],
  ['subagent 3 levels deep', subagent, session('tasks', 'T4', 'a', 'b', 'c.md'), 'allow'],
  ['subagent dotted file name', subagent, session('tasks', 'T4', 'progress-v1.2.md'), 'allow'],
  ['subagent .. inside its task', subagent, raw(() => `${root}/sessions/${P}/tasks/T4/sub/../progress.md`), 'allow', session('tasks', 'T4', 'progress.md')],
  ['subagent 4 levels deep', subagent, session('tasks', 'T4', 'a', 'b', 'c', 'd.md'), 'task-depth'],
  ['subagent the task dir itself', subagent, session('tasks', 'T4'), 'task-depth'],
  ['subagent other task', subagent, session('tasks', 'T5', 'progress.md'), 'other-task'],
  ['subagent sub-task of its task', subagent, session('tasks', 'T4.1', 'progress.md'), 'other-task'],
  ['subagent lower-case task id', subagent, session('tasks', 't4', 'progress.md'), 'other-task'],
  ['subagent .. into another task', subagent, raw(() => `${root}/sessions/${P}/tasks/T4/../T5/x.md`), 'other-task'],
  ['subagent non-.md', subagent, session('tasks', 'T4', 'raw'), 'not-markdown'],
  ['subagent PROGRESS.MD', subagent, session('tasks', 'T4', 'PROGRESS.MD'), 'name-case'],
  ['subagent hidden file', subagent, session('tasks', 'T4', '.hidden.md'), 'invalid-key'],
  ['subagent symlink into another session', subagent, session('tasks', 'T4', 'esc.md'), 'other-session'],
  ['subagent notes.md', subagent, session('notes.md'), 'subagent-task-only'],
  ['subagent checkpoint.md', subagent, session('checkpoint.md'), 'subagent-task-only'],
  ['subagent MEMORY.md', subagent, project('MEMORY.md'), 'subagent-task-only'],
  ["subagent same task id in another session", subagent, inRoot('sessions', Q, 'tasks', 'T4', 'progress.md'), 'other-session'],
  ['subagent relative path', subagent, raw(() => 'tasks/T4/progress.md'), 'absolute-path'],
  // Malformed actors.
  ['subagent with a malformed task id', { ...subagent, taskId: 'task-4' }, session('tasks', 'task-4', 'x.md'), 'invalid-actor'],
  ['writer with a path-like session id', { ...writer, sessionId: `../${Q}` }, inRoot('sessions', Q, 'checkpoint.md'), 'invalid-actor'],
];

function expectedAllowedPaths(actor: MemoryActor): string[] {
  return allowedWritePaths(root, actor);
}

describe('write guard: table of targets', () => {
  it('covers at least 50 targets and every actor kind', () => {
    expect(rows.length).toBeGreaterThanOrEqual(50);
    expect(new Set(rows.map(([, actor]) => actor.kind))).toEqual(new Set(['writer', 'main', 'subagent']));
  });

  const cases = rows.map(([label, actor, target, expected, canonical]) => ({ label, actor, target, expected, canonical }));

  it.each(cases)('$label', async ({ actor, target, expected, canonical }) => {
    const decision = await checkMemoryWrite({ root, target: target(), actor, disableWrite: false });
    if (expected === 'allow') {
      expect(decision).toEqual({ allowed: true, canonical: (canonical ?? target)() });
      return;
    }
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.rule).toBe(expected);
    expect(decision.message).toContain(`[rule: ${expected}]`);
    expect(decision.message).toContain(JSON.stringify(target()));
    if (expected === 'invalid-actor') {
      expect(decision.allowed_paths).toEqual([]);
      return;
    }
    expect(decision.allowed_paths).toEqual(expectedAllowedPaths(actor));
    for (const allowed of decision.allowed_paths) expect(decision.message).toContain(allowed);
  });
});

describe('write guard: refusal help and switches', () => {
  it("lists the parent session's and current project's absolute paths for the writer", async () => {
    const decision = await checkMemoryWrite({
      root,
      target: path.join(root, 'sessions', Q, 'checkpoint.md'),
      actor: writer,
      disableWrite: false,
    });
    expect(decision).toMatchObject({ allowed: false, rule: 'other-session' });
    if (decision.allowed) return;
    expect(decision.allowed_paths).toEqual([
      path.join(root, 'sessions', P, 'checkpoint.md'),
      path.join(root, 'sessions', P, 'checkpoint-<topic>.md'),
      path.join(root, 'sessions', P, 'notes.md'),
      path.join(root, 'projects', PID, 'MEMORY.md'),
      path.join(root, 'projects', PID, 'MEMORY-<topic>.md'),
    ]);
    expect(decision.message).toContain('The checkpoint writer may write only:');
    expect(decision.canonical).toBe(path.join(root, 'sessions', Q, 'checkpoint.md'));
  });

  it('names the subagent task and its directory in the help text', async () => {
    const decision = await checkMemoryWrite({
      root,
      target: path.join(root, 'sessions', P, 'notes.md'),
      actor: subagent,
      disableWrite: false,
    });
    expect(decision.allowed).toBe(false);
    if (decision.allowed) return;
    expect(decision.message).toContain('A subagent bound to T4 may write only:');
    expect(decision.allowed_paths).toContain(path.join(root, 'sessions', P, 'tasks', 'T4', 'progress.md'));
  });

  const disabled: [label: string, actor: MemoryActor, target: () => string][] = [
    ['writer', writer, () => path.join(root, 'sessions', P, 'checkpoint.md')],
    ['main', main, () => path.join(root, 'sessions', P, 'notes.md')],
    ['subagent', subagent, () => path.join(root, 'sessions', P, 'tasks', 'T4', 'progress.md')],
    ['writer, outside the root', writer, () => '/etc/passwd'],
  ];

  it.each(disabled)('memory.disable_write refuses every write (%s) and names the key', async (_label, actor, target) => {
    const decision = await checkMemoryWrite({ root, target: target(), actor, disableWrite: true });
    expect(decision).toMatchObject({ allowed: false, rule: 'memory-write-disabled', allowed_paths: [] });
    if (decision.allowed) return;
    expect(decision.message).toContain('memory.disable_write');
  });

  it('works when the memory root itself is reached through a symlink', async () => {
    const linkedRoot = path.join(base, 'memory-link');
    await symlink(root, linkedRoot);
    const allowed = await checkMemoryWrite({
      root: linkedRoot,
      target: path.join(linkedRoot, 'sessions', P, 'checkpoint.md'),
      actor: writer,
      disableWrite: false,
    });
    expect(allowed).toEqual({ allowed: true, canonical: path.join(root, 'sessions', P, 'checkpoint.md') });
    const refused = await checkMemoryWrite({
      root: linkedRoot,
      target: path.join(linkedRoot, '..', 'outside', 'x.md'),
      actor: writer,
      disableWrite: false,
    });
    expect(refused).toMatchObject({ allowed: false, rule: 'memory-root' });
  });

  it('refuses a relative memory root as a caller error', async () => {
    await expect(
      checkMemoryWrite({ root: 'memory', target: '/x/memory/a.md', actor: writer, disableWrite: false }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
