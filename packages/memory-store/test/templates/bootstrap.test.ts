import { readFile, readdir, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootstrapMemory, loadPrompt, memoryPaths } from '../../src/index.ts';
import { useTempDirs } from '../temp-dir.ts';

const tempDir = useTempDirs();

async function freshPaths() {
  return memoryPaths(path.join(await tempDir(), 'memory'), { projectId: 'demo-shop', sessionId: 's1' });
}

describe('bootstrapMemory', () => {
  it('creates the directories and the three files from their templates, once', async () => {
    const paths = await freshPaths();
    const first = await bootstrapMemory(paths);
    expect(first.created).toEqual([paths.checkpoint, paths.memory, paths.notes]);
    expect(await readFile(paths.checkpoint, 'utf8')).toBe(loadPrompt('checkpoint-template'));
    expect(await readFile(paths.memory, 'utf8')).toBe(loadPrompt('memory-template'));
    expect(await readFile(paths.notes, 'utf8')).toBe(loadPrompt('notes-template'));
    expect((await stat(paths.tasksDir)).isDirectory()).toBe(true);
    // Global memory is user-owned and never created.
    await expect(stat(paths.globalDir)).rejects.toMatchObject({ code: 'ENOENT' });

    const second = await bootstrapMemory(paths);
    expect(second.created).toEqual([]);
  });

  it('never overwrites an existing file', async () => {
    const paths = await freshPaths();
    await mkdir(paths.sessionDir, { recursive: true });
    await writeFile(paths.checkpoint, 'my edited checkpoint\n');
    await writeFile(paths.notes, '');
    const result = await bootstrapMemory(paths);
    expect(result.created).toEqual([paths.memory]);
    expect(await readFile(paths.checkpoint, 'utf8')).toBe('my edited checkpoint\n');
    expect(await readFile(paths.notes, 'utf8')).toBe('');
  });

  it('renames a legacy lowercase memory.md to MEMORY.md and keeps its content', async () => {
    const paths = await freshPaths();
    await mkdir(paths.projectDir, { recursive: true });
    await writeFile(path.join(paths.projectDir, 'memory.md'), 'legacy memory\n');
    const result = await bootstrapMemory(paths);
    expect(result.created).not.toContain(paths.memory);
    expect(await readFile(paths.memory, 'utf8')).toBe('legacy memory\n');
    expect(await readdir(paths.projectDir)).toEqual(['MEMORY.md']);
  });

  it('leaves a legacy memory.md alone when MEMORY.md already exists', async () => {
    const paths = await freshPaths();
    await mkdir(paths.projectDir, { recursive: true });
    await writeFile(path.join(paths.projectDir, 'memory.md'), 'legacy\n');
    await writeFile(paths.memory, 'current\n');
    await bootstrapMemory(paths);
    expect(await readFile(paths.memory, 'utf8')).toBe('current\n');
    expect(await readFile(path.join(paths.projectDir, 'memory.md'), 'utf8')).toBe('legacy\n');
  });

  it('leaves exactly one intact copy of each file after 10 concurrent bootstraps', async () => {
    const paths = await freshPaths();
    const results = await Promise.all(Array.from({ length: 10 }, () => bootstrapMemory(paths)));
    const created = results.flatMap((result) => result.created).sort();
    expect(created).toEqual([paths.checkpoint, paths.memory, paths.notes].sort());
    expect(await readFile(paths.checkpoint, 'utf8')).toBe(loadPrompt('checkpoint-template'));
    expect(await readFile(paths.memory, 'utf8')).toBe(loadPrompt('memory-template'));
    expect(await readFile(paths.notes, 'utf8')).toBe(loadPrompt('notes-template'));
    expect((await readdir(paths.sessionDir)).sort()).toEqual(['checkpoint.md', 'notes.md', 'tasks']);
  });

  it('migrates a legacy file exactly once under 10 concurrent bootstraps', async () => {
    const paths = await freshPaths();
    await mkdir(paths.projectDir, { recursive: true });
    await writeFile(path.join(paths.projectDir, 'memory.md'), 'legacy memory\n');
    const results = await Promise.all(Array.from({ length: 10 }, () => bootstrapMemory(paths)));
    expect(results.flatMap((result) => result.created)).not.toContain(paths.memory);
    expect(await readFile(paths.memory, 'utf8')).toBe('legacy memory\n');
    expect(await readdir(paths.projectDir)).toEqual(['MEMORY.md']);
  });
});
