import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type MemoryPaths, memoryPaths } from '../../src/memory-paths.ts';
import { GREP_LINE_CHARS } from '../../src/sandbox/grep.ts';
import { type WriterFiles, createWriterFiles } from '../../src/sandbox/writer-files.ts';
import { bootstrapMemory } from '../../src/templates/bootstrap.ts';
import { useTempDirs } from '../temp-dir.ts';

const tempDir = useTempDirs();
let base: string;
let paths: MemoryPaths;
let files: WriterFiles;

beforeEach(async () => {
  base = await tempDir();
  paths = memoryPaths(path.join(base, 'memory'), { projectId: 'demo-shop', sessionId: 's1' });
  await bootstrapMemory(paths);
  await bootstrapMemory(memoryPaths(paths.root, { projectId: 'other', sessionId: 's2' }));
  await writeFile(paths.checkpoint, '# Session checkpoint\n## §9 Live resources\n- QZDSN: postgres://localhost:55432/shop\r\n- port 4222\n');
  await writeFile(paths.memory, '# Project memory\n## Rules\n- always use QZDSN from .env\n');
  await writeFile(path.join(paths.sessionDir, 'raw.txt'), 'QZDSN in a text file\n');
  files = createWriterFiles(paths);
});

describe('writer grep', () => {
  it('returns file:line:text for every matching line under the memory root', async () => {
    const result = await files.grep('QZDSN');
    expect(result).toEqual({
      matches: [
        `${paths.memory}:3:- always use QZDSN from .env`,
        `${paths.checkpoint}:3:- QZDSN: postgres://localhost:55432/shop`,
        `${path.join(paths.sessionDir, 'raw.txt')}:1:QZDSN in a text file`,
      ],
      truncated: false,
    });
  });

  it('takes a JavaScript regular expression and filters files with an include glob', async () => {
    expect((await files.grep('^## §\\d+ Live', paths.sessionDir)).matches).toEqual([
      `${paths.checkpoint}:2:## §9 Live resources`,
    ]);
    expect((await files.grep('QZDSN', undefined, '*.md')).matches).toHaveLength(2);
    expect((await files.grep('QZDSN', undefined, 'projects/**')).matches).toEqual([
      `${paths.memory}:3:- always use QZDSN from .env`,
    ]);
    expect((await files.grep('QZDSN', paths.sessionDir, 'checkpoint*.md')).matches).toHaveLength(1);
    expect((await files.grep('port \\d{4}$', paths.checkpoint)).matches).toEqual([`${paths.checkpoint}:4:- port 4222`]);
    expect((await files.grep('nothing matches this', paths.checkpoint)).matches).toEqual([]);
  });

  it('caps the matches at 200 and says so', async () => {
    await writeFile(path.join(paths.sessionDir, 'checkpoint-big.md'), 'hit\n'.repeat(250));
    const result = await files.grep('^hit$', paths.sessionDir);
    expect(result.matches).toHaveLength(200);
    expect(result.truncated).toBe(true);
    expect(result.matches[199]).toBe(`${path.join(paths.sessionDir, 'checkpoint-big.md')}:200:hit`);
  });

  it('shortens long lines without splitting a surrogate pair, and skips binary files', async () => {
    const long = `${'x'.repeat(GREP_LINE_CHARS - 1)}😀tail`;
    await writeFile(path.join(paths.sessionDir, 'checkpoint-long.md'), `${long}\n`);
    await writeFile(path.join(paths.sessionDir, 'blob.bin'), Buffer.from([0x78, 0x00, 0x74, 0x61, 0x69, 0x6c]));
    const { matches } = await files.grep('tail', paths.sessionDir);
    expect(matches).toEqual([`${path.join(paths.sessionDir, 'checkpoint-long.md')}:1:${'x'.repeat(GREP_LINE_CHARS - 1)}…`]);
  });

  it('stays inside the memory root and does not follow symbolic links', async () => {
    await mkdir(path.join(base, 'memory-evil'));
    await writeFile(path.join(base, 'memory-evil', 'secret.md'), 'QZDSN secret\n');
    await symlink(path.join(base, 'memory-evil'), path.join(paths.sessionDir, 'linked'));
    await symlink(path.join(base, 'memory-evil', 'secret.md'), path.join(paths.sessionDir, 'checkpoint-link.md'));
    const { matches } = await files.grep('secret');
    expect(matches).toEqual([]);
    for (const target of [
      path.join(base, 'memory-evil'),
      `${paths.root}/../memory-evil/secret.md`,
      path.join(paths.sessionDir, 'checkpoint-link.md'),
      path.join(paths.sessionDir, 'linked'),
      'sessions',
    ]) {
      await expect(files.grep('QZDSN', target)).rejects.toMatchObject({ code: 'path_refused' });
    }
  });

  it('rejects a bad regular expression and a missing path', async () => {
    await expect(files.grep('(unclosed')).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(files.grep('')).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(files.grep('x', path.join(paths.sessionDir, 'missing.md'))).rejects.toMatchObject({ code: 'not_found' });
    await expect(files.grep('x', undefined, '{a')).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
