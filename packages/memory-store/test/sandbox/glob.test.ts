import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import { type MemoryPaths, memoryPaths } from '../../src/memory-paths.ts';
import { compileGlob, expandBraces, splitGlobBase } from '../../src/sandbox/glob.ts';
import { type WriterFiles, createWriterFiles } from '../../src/sandbox/writer-files.ts';
import { bootstrapMemory } from '../../src/templates/bootstrap.ts';
import { useTempDirs } from '../temp-dir.ts';

describe('compileGlob', () => {
  it.each([
    ['*.md', 'checkpoint.md', true],
    ['*.md', 'sessions/s1/notes.md', true],
    ['*.md', 'notes.txt', false],
    ['*.md', 'dir.md/x.txt', false],
    ['sessions/*/checkpoint.md', 'sessions/s1/checkpoint.md', true],
    ['sessions/*/checkpoint.md', 'sessions/s1/tasks/checkpoint.md', false],
    ['sessions/*/checkpoint.md', 'checkpoint.md', false],
    ['**/progress.md', 'progress.md', true],
    ['**/progress.md', 'sessions/s1/tasks/T1/progress.md', true],
    ['**/progress.md', 'sessions/s1/tasks/T1/progress.md.bak', false],
    ['sessions/**', 'sessions/s1/tasks/T1/progress.md', true],
    ['sessions/**', 'projects/p/MEMORY.md', false],
    ['sessions/**/T?/*.md', 'sessions/s1/tasks/T4/spec.md', true],
    ['sessions/**/T?/*.md', 'sessions/s1/tasks/T42/spec.md', false],
    ['checkpoint-?.md', 'checkpoint-a.md', true],
    ['checkpoint-?.md', 'checkpoint-ab.md', false],
    ['checkpoint-*.md', 'checkpoint-.md', true],
    ['{checkpoint,notes}.md', 'notes.md', true],
    ['{checkpoint,notes}.md', 'MEMORY.md', false],
    ['projects/*/MEMORY{,-*}.md', 'projects/p/MEMORY.md', true],
    ['projects/*/MEMORY{,-*}.md', 'projects/p/MEMORY-rules.md', true],
    ['{a,{b,c}x}.md', 'cx.md', true],
    ['{a,{b,c}x}.md', 'c.md', false],
    ['a+b(1).md', 'a+b(1).md', true],
    ['a+b(1).md', 'aab1.md', false],
    ['[x].md', '[x].md', true],
    ['[x].md', 'x.md', false],
    ['/sessions/*.md', 'sessions/a.md', true],
    ['*.MD', 'a.md', false],
  ])('%s against %s → %s', (pattern, candidate, expected) => {
    expect(compileGlob(pattern)(candidate)).toBe(expected);
  });

  it('expands nested braces left to right and rejects unclosed or exploding ones', () => {
    expect(expandBraces('a{b,c{d,e}}f')).toEqual(['abf', 'acdf', 'acef']);
    expect(expandBraces('{,x}y')).toEqual(['y', 'xy']);
    expect(() => compileGlob('{a,b')).toThrow(MemoryStoreError);
    expect(() => compileGlob('{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}')).toThrow(/more than 256/);
    expect(() => compileGlob('')).toThrow(/empty/);
  });

  it('splits an absolute pattern into its literal base and the glob part', () => {
    expect(splitGlobBase('/m/sessions/s1/*.md')).toEqual({ base: '/m/sessions/s1', rest: '*.md' });
    expect(splitGlobBase('/m/sessions/{s1,s2}/notes.md')).toEqual({ base: '/m/sessions', rest: '{s1,s2}/notes.md' });
    expect(splitGlobBase('/m/sessions/s1/notes.md')).toEqual({ base: '/m/sessions/s1', rest: 'notes.md' });
    expect(splitGlobBase('/**/x.md')).toEqual({ base: '/', rest: '**/x.md' });
  });
});

describe('writer glob', () => {
  const tempDir = useTempDirs();
  let base: string;
  let paths: MemoryPaths;
  let files: WriterFiles;

  beforeEach(async () => {
    base = await tempDir();
    paths = memoryPaths(path.join(base, 'memory'), { projectId: 'demo-shop', sessionId: 's1' });
    await bootstrapMemory(paths);
    await bootstrapMemory(memoryPaths(paths.root, { projectId: 'other', sessionId: 's2' }));
    await mkdir(path.join(paths.tasksDir, 'T1'), { recursive: true });
    await writeFile(path.join(paths.tasksDir, 'T1', 'progress.md'), 'journal\n');
    await writeFile(path.join(paths.sessionDir, 'checkpoint-auth.md'), 'spill\n');
    await writeFile(path.join(paths.sessionDir, 'raw.txt'), 'raw\n');
    files = createWriterFiles(paths);
  });

  const rel = (root: string, list: readonly string[]) => list.map((file) => path.relative(root, file));

  it('lists matching files under the memory root, sorted, as absolute paths', async () => {
    const result = await files.glob('**/*.md');
    expect(result.truncated).toBe(false);
    expect(rel(paths.root, result.files)).toEqual([
      'projects/demo-shop/MEMORY.md',
      'projects/other/MEMORY.md',
      'sessions/s1/checkpoint-auth.md',
      'sessions/s1/checkpoint.md',
      'sessions/s1/notes.md',
      'sessions/s1/tasks/T1/progress.md',
      'sessions/s2/checkpoint.md',
      'sessions/s2/notes.md',
    ]);
    for (const file of result.files) expect(path.isAbsolute(file)).toBe(true);
  });

  it('searches under a given path, and takes the base of an absolute pattern', async () => {
    expect(rel(paths.sessionDir, (await files.glob('checkpoint*.md', paths.sessionDir)).files)).toEqual([
      'checkpoint-auth.md',
      'checkpoint.md',
    ]);
    expect(rel(paths.sessionDir, (await files.glob(`${paths.sessionDir}/*.{md,txt}`)).files)).toEqual([
      'checkpoint-auth.md',
      'checkpoint.md',
      'notes.md',
      'raw.txt',
    ]);
    expect(rel(paths.root, (await files.glob(`${paths.root}/sessions/*/notes.md`)).files)).toEqual([
      'sessions/s1/notes.md',
      'sessions/s2/notes.md',
    ]);
    expect(await files.glob('*.md', path.join(paths.sessionDir, 'missing'))).toEqual({ files: [], truncated: false });
  });

  it('stays inside the memory root', async () => {
    await mkdir(path.join(base, 'memory-evil'));
    await writeFile(path.join(base, 'memory-evil', 'secret.md'), 'secret\n');
    for (const attempt of [
      () => files.glob('*.md', base),
      () => files.glob('*.md', path.join(base, 'memory-evil')),
      () => files.glob('*.md', `${paths.root}/..`),
      () => files.glob(`${paths.root}/../memory-evil/*.md`),
      () => files.glob('/etc/*'),
      () => files.glob('*.md', 'sessions'),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'path_refused' });
    }
  });

  it('never follows symbolic links, in or out of the tree', async () => {
    const outside = path.join(base, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'leak.md'), 'leak\n');
    await symlink(outside, path.join(paths.sessionDir, 'linked-dir'));
    await symlink(path.join(outside, 'leak.md'), path.join(paths.sessionDir, 'linked-file.md'));
    const result = await files.glob('**/*.md', paths.sessionDir);
    expect(result.files.some((file) => file.includes('linked') || file.includes('leak'))).toBe(false);
    await expect(files.glob('*.md', path.join(paths.sessionDir, 'linked-dir'))).rejects.toMatchObject({
      code: 'path_refused',
    });
  });

  it('rejects a file as the search base and a bad pattern', async () => {
    await expect(files.glob('*.md', paths.checkpoint)).rejects.toMatchObject({ code: 'not_a_file' });
    await expect(files.glob('{a,b')).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('caps the result at 1000 files and says so', async () => {
    const many = path.join(paths.sessionDir, 'many');
    await mkdir(many);
    await Promise.all(Array.from({ length: 1005 }, (_, index) => writeFile(path.join(many, `f${index}.md`), '')));
    const result = await files.glob('*.md', many);
    expect(result.files).toHaveLength(1000);
    expect(result.truncated).toBe(true);
  });
});
