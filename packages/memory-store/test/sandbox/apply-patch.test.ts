import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryStoreError } from '../../src/memory-errors.ts';
import { type MemoryPaths, memoryPaths } from '../../src/memory-paths.ts';
import { applyChunks, parsePatch } from '../../src/sandbox/apply-patch.ts';
import { type WriterFiles, createWriterFiles } from '../../src/sandbox/writer-files.ts';
import { bootstrapMemory } from '../../src/templates/bootstrap.ts';
import { useTempDirs } from '../temp-dir.ts';

const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

function errorOf(run: () => unknown): MemoryStoreError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MemoryStoreError);
    return error as MemoryStoreError;
  }
  return expect.unreachable('expected an error');
}

describe('parsePatch', () => {
  it('parses add, delete and update (with move, context, end of file) sections', () => {
    const parsed = parsePatch(
      patch(
        '*** Add File: /m/a.md',
        '+# A',
        '+',
        '+body',
        '*** Delete File: /m/b.md',
        '*** Update File: /m/c.md',
        '*** Move to: /m/d.md',
        '@@ ## §4 Task tree',
        ' _Italic._',
        '-(none yet)',
        '+- T1',
        '',
        '@@',
        '-last',
        '+LAST',
        '*** End of File',
      ),
    );
    expect(parsed).toEqual([
      { kind: 'add', path: '/m/a.md', content: '# A\n\nbody\n' },
      { kind: 'delete', path: '/m/b.md' },
      {
        kind: 'update',
        path: '/m/c.md',
        moveTo: '/m/d.md',
        chunks: [
          { context: '## §4 Task tree', oldLines: ['_Italic._', '(none yet)'], newLines: ['_Italic._', '- T1'], endOfFile: false },
          { oldLines: ['last'], newLines: ['LAST'], endOfFile: true },
        ],
      },
    ]);
  });

  it('accepts CRLF, surrounding blank lines and a first hunk without @@', () => {
    const text = `\n\n${patch('*** Update File: /m/c.md', '-a', '+b')}\n\n`.replace(/\n/g, '\r\n');
    expect(parsePatch(text)).toEqual([
      { kind: 'update', path: '/m/c.md', chunks: [{ oldLines: ['a'], newLines: ['b'], endOfFile: false }] },
    ]);
  });

  it.each([
    ['no Begin line', '*** Update File: /m/c.md\n-a\n+b\n*** End Patch', /start with "\*\*\* Begin Patch"/],
    ['no End line', '*** Begin Patch\n*** Delete File: /m/a.md', /end with "\*\*\* End Patch"/],
    ['an empty patch', patch(), /changes no file/],
    ['an unknown header', patch('*** Rename File: /m/a.md'), /line 2: expected/],
    ['an added line without +', patch('*** Add File: /m/a.md', '+ok', 'oops'), /line 4: every line of an added file/],
    ['a hunk line without a prefix', patch('*** Update File: /m/c.md', '@@', '-a', 'b'), /line 5: a hunk line/],
    ['an update without hunks', patch('*** Update File: /m/c.md', '*** Delete File: /m/x.md'), /needs at least one hunk/],
    ['a missing path', patch('*** Delete File:   '), /missing path/],
  ])('rejects %s with the line number', (_label, text, message) => {
    const error = errorOf(() => parsePatch(text));
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toMatch(message);
  });
});

describe('applyChunks', () => {
  const file = 'one\ntwo\nthree\ntwo\nfour\n';

  it('replaces the first match after the previous hunk, in order', () => {
    const chunks = [
      { oldLines: ['two'], newLines: ['TWO'], endOfFile: false },
      { oldLines: ['two'], newLines: ['2'], endOfFile: false },
    ];
    expect(applyChunks(file, chunks, 'f')).toBe('one\nTWO\nthree\n2\nfour\n');
  });

  it('seeks the @@ context line first, and tolerates whitespace differences', () => {
    const chunks = [{ context: 'three', oldLines: ['two  '], newLines: ['second two'], endOfFile: false }];
    expect(applyChunks(file, chunks, 'f')).toBe('one\ntwo\nthree\nsecond two\nfour\n');
    expect(applyChunks('  indented\n', [{ oldLines: ['indented'], newLines: ['x'], endOfFile: false }], 'f')).toBe('x\n');
  });

  it('inserts a pure addition after its context line, or at the end without one', () => {
    expect(applyChunks(file, [{ context: 'three', oldLines: [], newLines: ['3.5'], endOfFile: false }], 'f')).toBe(
      'one\ntwo\nthree\n3.5\ntwo\nfour\n',
    );
    expect(applyChunks('a', [{ oldLines: [], newLines: ['b'], endOfFile: false }], 'f')).toBe('a\nb\n');
  });

  it('anchors an End of File hunk at the end', () => {
    const text = 'x\nend\nx\nend\n';
    expect(applyChunks(text, [{ oldLines: ['end'], newLines: ['END'], endOfFile: true }], 'f')).toBe('x\nend\nx\nEND\n');
  });

  it('fails with edit_mismatch naming the hunk and the lines it expected', () => {
    const error = errorOf(() =>
      applyChunks(file, [
        { oldLines: ['one'], newLines: ['1'], endOfFile: false },
        { oldLines: ['one'], newLines: ['1'], endOfFile: false },
      ], '/m/f.md'),
    );
    expect(error.code).toBe('edit_mismatch');
    expect(error.message).toMatch(/hunk 2 for \/m\/f\.md/);
    expect(errorOf(() => applyChunks(file, [{ context: 'zero', oldLines: ['one'], newLines: [], endOfFile: false }], 'f')).message).toMatch(
      /context line/,
    );
  });
});

describe('writer applyPatch', () => {
  const tempDir = useTempDirs();
  let paths: MemoryPaths;
  let files: WriterFiles;
  let otherCheckpoint: string;

  beforeEach(async () => {
    const base = await tempDir();
    paths = memoryPaths(path.join(base, 'memory'), { projectId: 'demo-shop', sessionId: 's1' });
    await bootstrapMemory(paths);
    await bootstrapMemory(memoryPaths(paths.root, { projectId: 'other', sessionId: 's2' }));
    otherCheckpoint = path.join(paths.root, 'sessions', 's2', 'checkpoint.md');
    files = createWriterFiles(paths);
  });

  const spill = (topic: string) => path.join(paths.sessionDir, `checkpoint-${topic}.md`);
  const snapshot = async () => {
    const names = [...(await readdir(paths.sessionDir)), ...(await readdir(paths.projectDir))];
    const texts = await Promise.all([paths.checkpoint, paths.memory, paths.notes, otherCheckpoint].map((file) => readFile(file, 'utf8')));
    return { names: names.sort(), texts };
  };

  it('updates a section body, adds and deletes a spillover, and reports each change', async () => {
    await writeFile(spill('old'), 'stale\n');
    const result = await files.applyPatch(
      patch(
        `*** Update File: ${paths.checkpoint}`,
        '@@ ## §4 Task tree',
        '-(none yet)',
        '+- 🔄 T1 Build the guard',
        `*** Add File: ${spill('auth')}`,
        '+# Auth details',
        `*** Delete File: ${spill('old')}`,
        `*** Update File: ${paths.memory}`,
        '@@ ## Rules',
        ' _Hard constraints the user set that every session must follow; exact values (ports, DSNs, paths, commands) are kept verbatim._',
        '',
        '-(none yet)',
        '+- Port 4222 only',
      ),
    );
    expect(result.changes).toEqual([
      { action: 'update', path: paths.checkpoint },
      { action: 'add', path: spill('auth') },
      { action: 'delete', path: spill('old') },
      { action: 'update', path: paths.memory },
    ]);
    const checkpoint = await readFile(paths.checkpoint, 'utf8');
    expect(checkpoint).toMatch(/## §4 Task tree\n_[^\n]*_\n\n- 🔄 T1 Build the guard\n/);
    expect(checkpoint.match(/\(none yet\)/g)).toHaveLength(8);
    expect(await readFile(spill('auth'), 'utf8')).toBe('# Auth details\n');
    expect(await readFile(paths.memory, 'utf8')).toContain('_\n\n- Port 4222 only\n');
    await expect(readFile(spill('old'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('moves a spillover and lets later operations see earlier ones', async () => {
    await writeFile(spill('a'), 'one\n');
    const result = await files.applyPatch(
      patch(
        `*** Update File: ${spill('a')}`,
        `*** Move to: ${spill('b')}`,
        '-one',
        '+two',
        `*** Update File: ${spill('b')}`,
        '-two',
        '+three',
      ),
    );
    expect(result.changes).toEqual([
      { action: 'update', path: spill('b'), movedFrom: spill('a') },
      { action: 'update', path: spill('b') },
    ]);
    expect(await readFile(spill('b'), 'utf8')).toBe('three\n');
    await expect(readFile(spill('a'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  const refusals: [label: string, bad: () => string, code: MemoryStoreError['code'], rule: string | undefined][] = [
    ['a path in another session', () => `*** Add File: ${path.join(paths.root, 'sessions', 's2', 'checkpoint-x.md')}\n+x`, 'path_refused', 'other-session'],
    ['a relative path', () => '*** Add File: sessions/s1/checkpoint-x.md\n+x', 'path_refused', 'absolute-path'],
    ['a task journal', () => `*** Add File: ${path.join(paths.tasksDir, 'T1', 'progress.md')}\n+x`, 'path_refused', 'tasks-reserved'],
    ['a move out of the allowed files', () => `*** Update File: ${paths.notes}\n*** Move to: ${otherCheckpoint}\n@@\n+x`, 'path_refused', 'other-session'],
    ['deleting checkpoint.md', () => `*** Delete File: ${paths.checkpoint}`, 'path_refused', 'delete-primary'],
    ['moving MEMORY.md away', () => `*** Update File: ${paths.memory}\n*** Move to: ${path.join(paths.projectDir, 'MEMORY-x.md')}\n@@\n+x`, 'path_refused', 'delete-primary'],
    ['a hunk that does not match', () => `*** Update File: ${paths.notes}\n-no such line\n+x`, 'edit_mismatch', undefined],
    ['adding an existing file', () => `*** Add File: ${paths.notes}\n+x`, 'invalid_argument', undefined],
    ['updating a missing file', () => `*** Update File: ${spill('missing')}\n@@\n+x`, 'not_found', undefined],
    ['deleting a missing file', () => `*** Delete File: ${spill('missing')}`, 'not_found', undefined],
    ['a malformed patch', () => `*** Update File: ${paths.notes}\n@@\nbad line`, 'invalid_argument', undefined],
  ];

  it.each(refusals)('changes nothing when the patch has %s, even after valid operations', async (_label, bad, code, rule) => {
    const before = await snapshot();
    const text = patch(
      `*** Update File: ${paths.checkpoint}`,
      '@@ ## §1 Active intent',
      '-(none yet)',
      '+> "build it"',
      `*** Add File: ${spill('first')}`,
      '+first',
      ...bad().split('\n'),
    );
    const error = await files.applyPatch(text).then(
      () => expect.unreachable('expected a refusal'),
      (caught: unknown) => caught as MemoryStoreError,
    );
    expect(error).toBeInstanceOf(MemoryStoreError);
    expect(error.code).toBe(code);
    if (rule !== undefined) expect(error.details).toMatchObject({ rule });
    expect(await snapshot()).toEqual(before);
  });

  it('is refused entirely when memory writes are disabled', async () => {
    const disabled = createWriterFiles(paths, { disableWrite: true });
    const error = await disabled.applyPatch(patch(`*** Add File: ${spill('x')}`, '+x')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'path_refused', details: { rule: 'memory-write-disabled' } });
    expect((error as Error).message).toContain('memory.disable_write');
  });
});
