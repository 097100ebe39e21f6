import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryStoreError, memoryPaths, type MemoryPaths } from '../src/index.ts';

describe('memoryPaths', () => {
  it('lays out the session and project files under the memory root', () => {
    const paths = memoryPaths('/data/memory', { projectId: 'demo-shop', sessionId: 'sess_01' });
    expect(paths).toEqual({
      root: '/data/memory',
      globalDir: '/data/memory/global',
      globalMemory: '/data/memory/global/MEMORY.md',
      projectDir: '/data/memory/projects/demo-shop',
      memory: '/data/memory/projects/demo-shop/MEMORY.md',
      sessionDir: '/data/memory/sessions/sess_01',
      checkpoint: '/data/memory/sessions/sess_01/checkpoint.md',
      notes: '/data/memory/sessions/sess_01/notes.md',
      tasksDir: '/data/memory/sessions/sess_01/tasks',
      invalidCheckpoint: '/data/memory/sessions/sess_01/checkpoint.invalid.md',
    });
  });

  it('returns absolute paths for a relative root', () => {
    const paths = memoryPaths('.baton/memory/', { projectId: 'p', sessionId: 's' });
    expect(paths.root).toBe(path.resolve('.baton/memory'));
    const byName: Readonly<Record<keyof MemoryPaths, string>> = paths;
    for (const value of Object.values(byName)) expect(path.isAbsolute(value)).toBe(true);
  });

  it.each(['', '..', 'a/b', 'a.b', 'x'.repeat(129), 'sp ace', 'é'])('refuses the id %j with invalid_id', (bad) => {
    for (const ids of [
      { projectId: bad, sessionId: 's' },
      { projectId: 'p', sessionId: bad },
    ]) {
      try {
        memoryPaths('/m', ids);
        expect.unreachable('memoryPaths accepted an invalid id');
      } catch (error) {
        expect(error).toBeInstanceOf(MemoryStoreError);
        expect((error as MemoryStoreError).code).toBe('invalid_id');
      }
    }
  });

  it('accepts a 128-character id', () => {
    expect(memoryPaths('/m', { projectId: 'x'.repeat(128), sessionId: 'A-z_9' }).memory).toContain('x'.repeat(128));
  });
});
