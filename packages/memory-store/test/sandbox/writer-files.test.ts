import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  MemoryStoreError,
  type MemoryPaths,
  type WriterFiles,
  bootstrapMemory,
  createWriterFiles,
  memoryPaths,
} from '../../src/index.ts';
import { useTempDirs } from '../temp-dir.ts';

const tempDir = useTempDirs();

let base: string;
let paths: MemoryPaths;
let files: WriterFiles;

beforeEach(async () => {
  base = await tempDir();
  paths = memoryPaths(path.join(base, 'memory'), { projectId: 'demo-shop', sessionId: 's1' });
  await bootstrapMemory(paths);
  await bootstrapMemory(memoryPaths(paths.root, { projectId: 'other-project', sessionId: 's2' }));
  files = createWriterFiles(paths);
});

async function expectCode(promise: Promise<unknown>, code: MemoryStoreError['code']): Promise<MemoryStoreError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(MemoryStoreError);
    expect((error as MemoryStoreError).code).toBe(code);
    return error as MemoryStoreError;
  }
  return expect.unreachable(`expected ${code}`);
}

describe('writer files: allowed targets', () => {
  it.each([
    ['checkpoint.md', () => paths.checkpoint],
    ['notes.md', () => paths.notes],
    ['a checkpoint spillover', () => path.join(paths.sessionDir, 'checkpoint-api-design.md')],
    ['MEMORY.md', () => paths.memory],
    ['a memory spillover', () => path.join(paths.projectDir, 'MEMORY-db_schema.md')],
  ])('writes %s and reads it back byte for byte', async (_label, target) => {
    const content = '# x\n\n- DSN: postgres://shop_test:shop_test@localhost:55432/shop_test\r\n€ ünïcode\n';
    const result = await files.write(target(), content);
    expect(result).toEqual({ path: target(), bytes: Buffer.byteLength(content) });
    expect(await readFile(target(), 'utf8')).toBe(content);
    expect(await files.read(target())).toBe(content);
  });

  it('accepts non-canonical spellings that resolve to an allowed file and writes the canonical file', async () => {
    const dotted = path.join(paths.sessionDir, 'tasks', '..', 'checkpoint.md');
    const doubled = paths.checkpoint.replace('/sessions/', '//sessions//');
    await files.write(dotted, 'one\n');
    expect(await readFile(paths.checkpoint, 'utf8')).toBe('one\n');
    await files.write(doubled, 'two\n');
    expect(await readFile(paths.checkpoint, 'utf8')).toBe('two\n');
  });

  it('reads anywhere under the memory root, including task journals and other sessions', async () => {
    const progress = path.join(paths.tasksDir, 'T1', 'progress.md');
    await mkdir(path.dirname(progress), { recursive: true });
    await writeFile(progress, 'journal\n');
    expect(await files.read(progress)).toBe('journal\n');
    const otherNotes = path.join(paths.root, 'sessions', 's2', 'notes.md');
    expect(await files.read(otherNotes)).toContain('# Session notes');
  });
});

describe('writer files: refused targets', () => {
  const refusedWrites: [string, () => string][] = [
    ["another session's checkpoint", () => path.join(paths.root, 'sessions', 's2', 'checkpoint.md')],
    ["another session's notes", () => path.join(paths.root, 'sessions', 's2', 'notes.md')],
    ["another project's MEMORY.md", () => path.join(paths.root, 'projects', 'other-project', 'MEMORY.md')],
    ['global memory', () => paths.globalMemory],
    ['a .. escape out of the tree', () => path.join(paths.sessionDir, '..', '..', '..', 'escape.md')],
    ['a .. hop into another session', () => path.join(paths.sessionDir, '..', 's2', 'checkpoint.md')],
    ['a // form into another project', () => `${paths.root}//projects//other-project/MEMORY.md`],
    ['a non-.md name', () => path.join(paths.sessionDir, 'checkpoint.txt')],
    ['an upper-case .MD extension', () => path.join(paths.projectDir, 'MEMORY.MD')],
    ['a wrongly cased checkpoint', () => path.join(paths.sessionDir, 'CHECKPOINT.md')],
    ['the lowercase legacy memory.md', () => path.join(paths.projectDir, 'memory.md')],
    ['a free file in the session dir', () => path.join(paths.sessionDir, 'scratch.md')],
    ['the quarantine file', () => paths.invalidCheckpoint],
    ['a task journal', () => path.join(paths.tasksDir, 'T1', 'progress.md')],
    ['a file directly in tasks/', () => path.join(paths.tasksDir, 'checkpoint.md')],
    ['a nested spillover directory', () => path.join(paths.sessionDir, 'checkpoint', 'x.md')],
    ['a spillover with an empty topic', () => path.join(paths.sessionDir, 'checkpoint-.md')],
    ['a sibling prefix dir (memory-evil)', () => path.join(base, 'memory-evil', 'sessions', 's1', 'checkpoint.md')],
    ['a relative path', () => 'sessions/s1/checkpoint.md'],
  ];

  it.each(refusedWrites)('refuses to write %s, naming the rule and the allowed paths', async (_label, target) => {
    const error = await expectCode(files.write(target(), 'x\n'), 'path_refused');
    expect(error.message).toContain('The checkpoint writer may write only:');
    for (const allowed of [paths.checkpoint, paths.notes, paths.memory]) expect(error.message).toContain(allowed);
    expect(error.details).toHaveProperty('rule');
  });

  it('refuses edits to the same targets', async () => {
    for (const [, target] of refusedWrites) await expectCode(files.edit(target(), 'a', 'b'), 'path_refused');
  });

  it('leaves refused targets untouched', async () => {
    const other = path.join(paths.root, 'sessions', 's2', 'checkpoint.md');
    const before = await readFile(other, 'utf8');
    await expectCode(files.write(other, 'clobbered\n'), 'path_refused');
    expect(await readFile(other, 'utf8')).toBe(before);
    expect(await readdir(base)).toEqual(['memory']);
  });

  it('refuses reads outside the memory root, including a sibling prefix dir', async () => {
    await mkdir(path.join(base, 'memory-evil'), { recursive: true });
    await writeFile(path.join(base, 'memory-evil', 'secret.md'), 'secret\n');
    await expectCode(files.read(path.join(base, 'memory-evil', 'secret.md')), 'path_refused');
    await expectCode(files.read(path.join(paths.root, '..', 'memory-evil', 'secret.md')), 'path_refused');
    await expectCode(files.read('/etc/hostname'), 'path_refused');
  });

  it('refuses a symlink whose target is out of the tree, existing or dangling', async () => {
    const outside = path.join(base, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'existing.md'), 'outside\n');
    const spill = path.join(paths.sessionDir, 'checkpoint-linked.md');
    await symlink(path.join(outside, 'existing.md'), spill);
    const error = await expectCode(files.write(spill, 'x\n'), 'path_refused');
    expect(error.details).toMatchObject({ canonical: path.join(outside, 'existing.md'), rule: 'memory-root' });
    await expectCode(files.read(spill), 'path_refused');
    expect(await readFile(path.join(outside, 'existing.md'), 'utf8')).toBe('outside\n');

    const dangling = path.join(paths.sessionDir, 'checkpoint-dangling.md');
    await symlink(path.join(outside, 'not-yet.md'), dangling);
    const danglingError = await expectCode(files.write(dangling, 'x\n'), 'path_refused');
    expect(danglingError.details).toMatchObject({ canonical: path.join(outside, 'not-yet.md'), rule: 'memory-root' });
    await expectCode(files.read(dangling), 'path_refused');
    expect(await readdir(outside)).toEqual(['existing.md']);
  });

  it('refuses a symlinked directory that leads out of the tree', async () => {
    const outside = path.join(base, 'outside-dir');
    await mkdir(outside);
    await symlink(outside, path.join(paths.root, 'sessions', 'linked'));
    await expectCode(
      files.write(path.join(paths.root, 'sessions', 'linked', 'checkpoint.md'), 'x\n'),
      'path_refused',
    );
    expect(await readdir(outside)).toEqual([]);
  });

  it('refuses a symlink inside the tree that redirects to another session', async () => {
    const otherCheckpoint = path.join(paths.root, 'sessions', 's2', 'checkpoint.md');
    const before = await readFile(otherCheckpoint, 'utf8');
    const link = path.join(paths.sessionDir, 'checkpoint-redirect.md');
    await symlink(otherCheckpoint, link);
    await expectCode(files.write(link, 'x\n'), 'path_refused');
    expect(await readFile(otherCheckpoint, 'utf8')).toBe(before);
  });
});

describe('writer files: read', () => {
  it('returns a line window with offset and limit, keeping line ends', async () => {
    await files.write(paths.notes, 'l1\nl2\r\nl3\nl4');
    expect(await files.read(paths.notes, { offset: 2, limit: 2 })).toBe('l2\r\nl3\n');
    expect(await files.read(paths.notes, { offset: 4 })).toBe('l4');
    expect(await files.read(paths.notes, { offset: 9 })).toBe('');
    await expectCode(files.read(paths.notes, { offset: 0 }), 'invalid_argument');
    await expectCode(files.read(paths.notes, { limit: 1.5 }), 'invalid_argument');
  });

  it('reports not_found for a missing file and not_a_file for a directory', async () => {
    await expectCode(files.read(path.join(paths.sessionDir, 'checkpoint-missing.md')), 'not_found');
    await expectCode(files.read(paths.tasksDir), 'not_a_file');
  });
});

describe('writer files: edit', () => {
  it('replaces a unique occurrence and only that', async () => {
    await files.write(paths.checkpoint, 'alpha\nbeta\ngamma\n');
    expect(await files.edit(paths.checkpoint, 'beta', 'BETA $& $1')).toEqual({
      path: paths.checkpoint,
      replacements: 1,
    });
    expect(await readFile(paths.checkpoint, 'utf8')).toBe('alpha\nBETA $& $1\ngamma\n');
  });

  it('fails with edit_mismatch when old_string is missing, leaving the file unchanged', async () => {
    await files.write(paths.checkpoint, 'alpha\n');
    const error = await expectCode(files.edit(paths.checkpoint, 'delta', 'x'), 'edit_mismatch');
    expect(error.message).toMatch(/not found/);
    expect(await readFile(paths.checkpoint, 'utf8')).toBe('alpha\n');
  });

  it('fails with edit_mismatch when old_string is ambiguous, unless replaceAll', async () => {
    await files.write(paths.memory, '(none yet)\n(none yet)\n(none yet)\n');
    const error = await expectCode(files.edit(paths.memory, '(none yet)', '- rule'), 'edit_mismatch');
    expect(error.message).toMatch(/occurs 3 times/);
    expect(error.details).toMatchObject({ occurrences: 3 });
    expect(await files.edit(paths.memory, '(none yet)', '- rule', true)).toMatchObject({ replacements: 3 });
    expect(await readFile(paths.memory, 'utf8')).toBe('- rule\n- rule\n- rule\n');
  });

  it('rejects empty and no-op edits, and edits of a missing file', async () => {
    await expectCode(files.edit(paths.checkpoint, '', 'x'), 'invalid_argument');
    await expectCode(files.edit(paths.checkpoint, 'same', 'same'), 'invalid_argument');
    await expectCode(files.edit(path.join(paths.sessionDir, 'checkpoint-new.md'), 'a', 'b'), 'not_found');
  });
});

describe('writer files: guard rules and memory.disable_write', () => {
  it.each([
    ["another session's checkpoint", () => path.join(paths.root, 'sessions', 's2', 'checkpoint.md'), 'other-session'],
    ["another project's MEMORY.md", () => path.join(paths.root, 'projects', 'other-project', 'MEMORY.md'), 'other-project'],
    ['a wrongly cased checkpoint', () => path.join(paths.sessionDir, 'Checkpoint.md'), 'name-case'],
    ['a task journal', () => path.join(paths.tasksDir, 'T1', 'progress.md'), 'tasks-reserved'],
    ['a sibling prefix dir', () => path.join(base, 'memory-evil', 'x.md'), 'memory-root'],
    ['a NUL byte', () => `${paths.checkpoint}\0`, 'nul-byte'],
  ])('refuses %s with the guard rule %s', async (_label, target, rule) => {
    const error = await expectCode(files.write(target(), 'x\n'), 'path_refused');
    expect(error.details).toMatchObject({ rule, allowed: files.allowedWrites });
    expect(error.message).toContain(`[rule: ${rule}]`);
  });

  it('refuses every write and edit when memory writes are disabled, while reads, glob and grep still work', async () => {
    const disabled = createWriterFiles(paths, { disableWrite: true });
    const before = await readFile(paths.checkpoint, 'utf8');
    for (const attempt of [
      () => disabled.write(paths.checkpoint, 'x\n'),
      () => disabled.edit(paths.checkpoint, '# Session checkpoint', '# X'),
      () => disabled.write(path.join(paths.sessionDir, 'checkpoint-new.md'), 'x\n'),
    ]) {
      const error = await expectCode(attempt(), 'path_refused');
      expect(error.details).toMatchObject({ rule: 'memory-write-disabled' });
      expect(error.message).toContain('memory.disable_write');
    }
    expect(await readFile(paths.checkpoint, 'utf8')).toBe(before);
    expect(await disabled.read(paths.checkpoint)).toBe(before);
    expect((await disabled.glob('checkpoint.md', paths.sessionDir)).files).toEqual([paths.checkpoint]);
    expect((await disabled.grep('^# Session checkpoint$', paths.checkpoint)).matches).toEqual([
      `${paths.checkpoint}:1:# Session checkpoint`,
    ]);
  });
});
